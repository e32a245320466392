package sqlcursor_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, linked by internal/cli in the binary
	_ "modernc.org/sqlite"             // the "sqlite" driver, likewise

	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/sqlcursor"
	"github.com/weirflow/weir/internal/trigger/triggertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestSQLiteRowsInChunks(t *testing.T) {
	t.Parallel()
	testRowsInChunks(t, "sqlite:///"+filepath.Join(t.TempDir(), "w.db"))
}

func TestPostgresRowsInChunks(t *testing.T) {
	t.Parallel()
	testRowsInChunks(t, pgtest.DSN(t))
}

// testRowsInChunks: 25 rows in chunks of 10 are three events (10, 10,
// 5) in the query's order, and the trigger ends; a run resumed after the
// stream's event 0 skips its rows and emits the last two chunks.
func testRowsInChunks(t *testing.T, uri string) {
	db := triggertest.OpenSQL(t, uri)
	if _, err := db.Exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER)"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 25; i++ {
		if _, err := db.Exec(fmt.Sprintf("INSERT INTO orders (id, total) VALUES (%d, %d)", i, i*10)); err != nil {
			t.Fatal(err)
		}
	}
	kwargs := `{"conn_id":"wh","sql":"SELECT id, total FROM orders ORDER BY id","chunk_size":10}`
	for _, tc := range []struct {
		last  int64
		first []int // the first id of each chunk
	}{{-1, []int{1, 11, 21}}, {0, []int{11, 21}}} {
		run := triggertest.Start(t, triggertest.New(t, sqlcursor.Type, kwargs), &trigger.Runtime{Connections: triggertest.Conns{"wh": uri},
			Stream: &trigger.StreamPosition{ID: "s", LastIndex: tc.last}})
		for _, want := range tc.first {
			var p struct {
				Rows []struct{ ID, Total int }
			}
			if err := json.Unmarshal(run.Event(t), &p); err != nil {
				t.Fatal(err)
			}
			n := min(10, 26-want)
			if len(p.Rows) != n || p.Rows[0].ID != want || p.Rows[n-1].ID != want+n-1 || p.Rows[0].Total != want*10 {
				t.Fatalf("after %d: chunk = %+v, want %d rows from id %d", tc.last, p.Rows, n, want)
			}
		}
		if err := run.Wait(t); err != nil {
			t.Errorf("after its last chunk the trigger returned %v", err)
		}
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	for kwargs, want := range map[string]string{
		`{"sql":"SELECT 1"}`:                                     `"conn_id" is required`,
		`{"conn_id":"wh","sql":" "}`:                             `"sql" is required`,
		`{"conn_id":"wh","sql":"SELECT 1","chunk_size":0}`:       `"chunk_size" must be between 1 and 10000 rows, got 0`,
		`{"conn_id":"wh","sql":"SELECT 1","chunk_size":20000}`:   `got 20000`,
		`{"conn_id":"wh","sql":"SELECT 1","poke_interval":"1s"}`: `unknown kwarg "poke_interval"`,
	} {
		if _, err := sqlcursor.Type.New(json.RawMessage(kwargs)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%s) = %v, want an error containing %q", kwargs, err, want)
		}
	}
}
