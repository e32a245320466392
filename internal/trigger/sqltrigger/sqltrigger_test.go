package sqltrigger_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, linked by internal/cli in the binary
	_ "modernc.org/sqlite"             // the "sqlite" driver, likewise

	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/wait"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/sqltrigger"
	"github.com/weirflow/weir/internal/trigger/triggertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestTruthy(t *testing.T) {
	t.Parallel()
	for _, v := range []any{nil, false, int64(0), 0.0, "", "0", "0.00", " 0 "} {
		if sqltrigger.Truthy(v) {
			t.Errorf("Truthy(%#v) = true, want false", v)
		}
	}
	for _, v := range []any{true, int64(-1), 0.5, "x", "1.5", "false", "2026-12-01T10:00:00Z"} {
		if !sqltrigger.Truthy(v) {
			t.Errorf("Truthy(%#v) = false, want true", v)
		}
	}
}

func TestSQLiteTableAppearsThenFills(t *testing.T) {
	t.Parallel()
	testTableAppearsThenFills(t, "sqlite:///"+filepath.Join(t.TempDir(), "w.db"))
}

func TestPostgresTableAppearsThenFills(t *testing.T) {
	t.Parallel()
	testTableAppearsThenFills(t, pgtest.DSN(t))
}

// testTableAppearsThenFills: the query fails while its table is missing
// (logged, polled again), counts 0 while it is empty (falsy), and fires
// with its first row once a row is in.
func testTableAppearsThenFills(t *testing.T, uri string) {
	db := triggertest.OpenSQL(t, uri)
	tr := triggertest.New(t, sqltrigger.Type, `{"conn_id":"wh","sql":"SELECT count(*) AS n, max(name) AS last FROM ready","poke_interval":"10ms"}`)
	run := triggertest.Start(t, tr, &trigger.Runtime{Connections: triggertest.Conns{"wh": uri}})
	wait.Until(t, triggertest.Bound, "the missing table to be logged", func() bool { return strings.Contains(run.Log(), "ready") })
	exec(t, db, "CREATE TABLE ready (name TEXT)")
	exec(t, db, "INSERT INTO ready (name) VALUES ('part-1')")
	if got := string(run.Event(t)); got != `{"last":"part-1","n":1}` {
		t.Errorf("event = %s, want the first row {last: part-1, n: 1}", got)
	}
	if err := run.Wait(t); err != nil {
		t.Errorf("after its event the trigger returned %v", err)
	}
}

func TestABadConnectionEndsTheTrigger(t *testing.T) {
	t.Parallel()
	tr := triggertest.New(t, sqltrigger.Type, `{"conn_id":"wh","sql":"SELECT 1"}`)
	run := triggertest.Start(t, tr, &trigger.Runtime{Connections: triggertest.Conns{"wh": "mysql://u:pw@h/db"}})
	if err := run.Wait(t); err == nil || !strings.Contains(err.Error(), `unsupported database scheme "mysql"`) || strings.Contains(err.Error(), "pw") {
		t.Errorf("Run = %v, want an error naming the unsupported scheme and not the password", err)
	}
}

func TestCancelStopsAPollingTrigger(t *testing.T) {
	t.Parallel()
	uri := "sqlite:///" + filepath.Join(t.TempDir(), "w.db")
	run := triggertest.Start(t, triggertest.New(t, sqltrigger.Type, `{"conn_id":"wh","sql":"SELECT 0"}`), &trigger.Runtime{Connections: triggertest.Conns{"wh": uri}})
	run.Cancel(t)
}

func exec(t *testing.T, db *sql.DB, stmt string) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}
