package execapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store/postgres"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openEngine opens a migrated store of engine ("sqlite" or "postgres").
func openEngine(t testing.TB, engine string) *sqlstore.Store {
	t.Helper()
	if engine == "sqlite" {
		return sqlitetest.Open(t)
	}
	st, err := postgres.Open(t.Context(), pgtest.DSN(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return st
}

// Issue 13 finding 6: the Execution API refuses loose input with 400 and a
// message naming the problem, alike on SQLite and PostgreSQL, and stores
// nothing: data after the JSON body, bodies and values that are not UTF-8
// (they were stored as U+FFFD), escapes of half a surrogate pair, control
// characters in keys, the keys "." and ".." (%2e%2e), and values nested
// past the depth limit (whose error said "strings need quotes").
func TestLooseInputRefused(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			e := newStateEnvOn(t, execapitest.NewOn(t, openEngine(t, engine), execapi.Config{}), statestore.Config{})
			c := e.running(t, "r1")["a"]
			ti := c.Identity.TIID
			store := "/store/ti/" + ti + "/"
			deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
			for _, tc := range []struct{ method, path, body, want string }{
				{"PUT", store + "k", `{"value":1}garbage`, "unexpected data after the JSON value at offset 11"},
				{"PUT", store + "k", `{"value":1} {"value":2}`, "unexpected data after the JSON value"},
				{"PUT", store + "k", "{\"value\":\"caf\xe9\"}", "request body is not valid UTF-8 (byte 0xe9 at offset 13)"},
				{"PUT", store + "k", `{"value":"\ud800"}`, `the escape \uD800 at offset 1, half of a UTF-16 surrogate pair`},
				{"PUT", store + "k", `{"value":` + deep + `}`, "value nests deeper than 10000 levels of arrays and objects, the limit"},
				{"PUT", store + "a%00b", `{"value":1}`, `state key "a\x00b" has the control character U+0000 at byte 1`},
				{"PUT", store + "a%0Ab", `{"value":1}`, "control character U+000A"},
				{"PUT", store + "a%1Bb", `{"value":1}`, "control character U+001B"},
				{"PUT", store + "%FF", `{"value":1}`, "state key is not valid UTF-8 (byte 0xff at offset 0)"},
				{"PUT", store + "%2e%2e", `{"value":1}`, `state key ".." is not allowed`},
				{"PUT", store + "%2e", `{"value":1}`, `state key "." is not allowed`},
				{"GET", store + "%2e%2e", ``, `state key ".." is not allowed`},
				{"DELETE", store + "a%00b", ``, "control character U+0000"},
				{"PUT", "/task-instances/" + ti + "/heartbeat", `{}x`, "unexpected data after the JSON value"},
				{"POST", "/xcoms/d/r1/a/x", "\"\xff\"", "request body is not valid UTF-8"},
			} {
				status, detail := e.raw(t, c.Token(), tc.method, tc.path, tc.body)
				if status != http.StatusBadRequest || !strings.Contains(detail, tc.want) {
					t.Errorf("%s %s %.40q: %d %s; want 400 saying %q", tc.method, tc.path, tc.body, status, detail, tc.want)
				}
			}
			if rows := e.rows(t); len(rows) != 0 {
				t.Errorf("stored: %v", rows)
			}
			if x, err := e.Store.XComGet(t.Context(), "d", "r1", "a", core.NoMapIndex, "x"); !errors.Is(err, core.ErrNotFound) {
				t.Errorf("XCom stored: %v, %v", x, err)
			}
			// The in-task CLI's client refuses the same keys before sending.
			for _, key := range []string{".", "..", "a\x00b", ""} {
				if err := c.StateSet(t.Context(), ownTask, key, []byte("1"), ""); !errors.Is(err, core.ErrInvalid) {
					t.Errorf("client StateSet(%q) = %v, want ErrInvalid", key, err)
				}
				if err := c.StateDelete(t.Context(), ownTask, key); !errors.Is(err, core.ErrInvalid) {
					t.Errorf("client StateDelete(%q) = %v, want ErrInvalid (not a clear of the scope)", key, err)
				}
			}
		})
	}
}

// raw sends body to path (under /execution) with token and returns the
// status and the problem's detail.
func (e *stateEnv) raw(t *testing.T, token, method, path, body string) (int, string) {
	t.Helper()
	a := send(t, method, e.url+path, token, body)
	var p execclient.Problem
	if err := json.Unmarshal([]byte(a.body), &p); err != nil {
		return a.status, "undecodable problem: " + a.body
	}
	return a.status, p.Detail
}
