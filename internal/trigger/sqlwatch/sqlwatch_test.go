package sqlwatch_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, linked by internal/cli in the binary
	_ "modernc.org/sqlite"             // the "sqlite" driver, likewise

	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/wait"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/sqlwatch"
	"github.com/weirflow/weir/internal/trigger/triggertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// source is a database to watch, on one engine.
type source struct {
	uri string
	db  *sql.DB
}

// onEachEngine runs fn on a fresh SQLite file and a fresh PostgreSQL
// database, each with the table orders (id, updated_at, region); the
// SQLite column is declared TIMESTAMP, which the driver reads as a time.
func onEachEngine(t *testing.T, fn func(t *testing.T, s source)) {
	t.Helper()
	for _, e := range []struct{ name, ts string }{{"sqlite", "TIMESTAMP"}, {"postgres", "timestamptz"}} {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			uri := "sqlite:///" + filepath.Join(t.TempDir(), "w.db")
			if e.name == "postgres" {
				uri = pgtest.DSN(t)
			}
			s := source{uri: uri, db: triggertest.OpenSQL(t, uri)}
			s.exec(t, fmt.Sprintf("CREATE TABLE orders (id INTEGER NOT NULL, updated_at %s, region TEXT)", e.ts))
			fn(t, s)
		})
	}
}

// insert adds rows "id@updated[@region]", e.g. "3@2026-01-01 10:00:00@eu",
// in one statement (a poll sees all of them or none).
func (s source) insert(t *testing.T, rows ...string) {
	t.Helper()
	var (
		values []string
		args   []any
	)
	for _, r := range rows {
		f := strings.SplitN(r, "@", 3)
		region := any(nil)
		if len(f) == 3 {
			region = f[2]
		}
		n := len(args)
		values = append(values, fmt.Sprintf("($%d, $%d, $%d)", n+1, n+2, n+3))
		args = append(args, f[0], f[1], region)
	}
	s.exec(t, "INSERT INTO orders (id, updated_at, region) VALUES "+strings.Join(values, ", "), args...)
}

func (s source) exec(t *testing.T, stmt string, args ...any) {
	t.Helper()
	if _, err := s.db.ExecContext(t.Context(), stmt, args...); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// start runs a sql_incremental watcher with kwargs (conn_id "shop"
// added) for w.
func start(t *testing.T, s source, w *triggertest.Watcher, kwargs string) *triggertest.Run {
	t.Helper()
	kwargs = `{"conn_id":"shop","poll_interval":"10ms",` + strings.TrimPrefix(kwargs, "{")
	tr := triggertest.New(t, sqlwatch.Type, kwargs)
	return w.Start(t, tr, &trigger.Runtime{Connections: triggertest.Conns{"shop": s.uri}})
}

const orders = `{"table":"orders","updated_column":"updated_at","key_column":"id"}`

// TestEachRowOnceWithEqualTimestampsAcrossARestart: rows sharing one
// updated value are each recorded once, in (updated, id) order, including
// rows with that same value inserted after the first poll; a watcher
// started again from the committed cursor records only what came later.
func TestEachRowOnceWithEqualTimestampsAcrossARestart(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s source) {
		s.insert(t, "2@2026-01-01 10:00:00", "1@2026-01-01 10:00:00", "3@2026-01-01 09:00:00")
		w := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "orders"})
		run := start(t, s, w, orders)
		w.WaitEvents(t, "orders", 3)
		s.insert(t, "4@2026-01-01 10:00:00", "5@2026-01-01 10:00:00")
		triggertest.ExpectFields(t, w.WaitEvents(t, "orders", 5), "id", "3,1,2,4,5", "by updated, then id")
		if got := w.Events("orders")[0].Payload.(map[string]any); got["updated_at"] == nil || len(got) != 3 {
			t.Errorf("payload %v, want the row's three columns", got)
		}
		run.Cancel(t)

		again := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "orders"})
		again.SetCursor("orders", w.Cursor("orders"))
		start(t, s, again, orders)
		s.insert(t, "6@2026-01-01 10:00:00")
		triggertest.ExpectFields(t, again.WaitEvents(t, "orders", 1), "id", "6", "after the restart: only 6")
		var cur map[string]any
		if err := json.Unmarshal(again.Cursor("orders"), &cur); err != nil || fmt.Sprint(cur["key"]) != "6" {
			t.Errorf("cursor %s, want the key of row 6", again.Cursor("orders"))
		}
	})
}

// TestABacklogDrainsInBoundedPolls: max_items bounds each commit, and the
// cursor moves to the last row committed, so a backlog arrives whole, in
// order, over several polls.
func TestABacklogDrainsInBoundedPolls(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s source) {
		for i := 1; i <= 7; i++ {
			s.insert(t, fmt.Sprintf("%d@2026-01-01 10:00:0%d", i, i%3))
		}
		w := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "orders"})
		start(t, s, w, `{"max_items":3,`+orders[1:])
		triggertest.ExpectFields(t, w.WaitEvents(t, "orders", 7), "id", "3,6,1,4,7,2,5", "every row, in cursor order")
		if n := triggertest.LargestCommit(w); n > 3 {
			t.Errorf("a commit of %d events, want at most max_items (3)", n)
		}
	})
}

// TestLookbackCatchesRowsCommittedLate: a row committed after the
// watcher passed its updated value is recorded when it is within the
// lookback, once; one older than the lookback is not, nor is any late row
// without a lookback (the documented guarantee).
func TestLookbackCatchesRowsCommittedLate(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s source) {
		s.insert(t, "1@2026-01-01 10:00:00", "3@2026-01-01 10:00:00")
		with := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "orders"})
		without := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "orders"})
		start(t, s, with, `{"lookback":"30m",`+orders[1:])
		start(t, s, without, orders)
		with.WaitEvents(t, "orders", 2)
		without.WaitEvents(t, "orders", 2)
		// late: an equal timestamp with a smaller key, one 10 minutes
		// earlier, and one 2 hours earlier (outside the lookback)
		s.insert(t, "2@2026-01-01 10:00:00", "0@2026-01-01 09:50:00", "9@2026-01-01 08:00:00")
		with.WaitEvents(t, "orders", 4)
		s.insert(t, "4@2026-01-01 10:05:00")
		triggertest.ExpectFields(t, with.WaitEvents(t, "orders", 5), "id", "1,3,0,2,4", "with a lookback: 1,3, the late 0,2, then 4 (not 9, older than the lookback)")
		triggertest.ExpectFields(t, without.WaitEvents(t, "orders", 3), "id", "1,3,4", "without a lookback, no late row")
		s.insert(t, "5@2026-01-01 10:06:00")
		triggertest.ExpectFields(t, with.WaitEvents(t, "orders", 6), "id", "1,3,0,2,4,5", "with a lookback: no row twice")
	})
}

// TestLookbackByNumber: a numeric updated column takes a numeric
// lookback.
func TestLookbackByNumber(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s source) {
		s.exec(t, "CREATE TABLE events (seq BIGINT NOT NULL, name TEXT NOT NULL)")
		s.exec(t, "INSERT INTO events VALUES (10, 'a'), (20, 'b')")
		w := triggertest.NewWatcher("events", trigger.AssetInfo{Name: "events"})
		start(t, s, w, `{"table":"events","updated_column":"seq","key_column":"name","lookback":5}`)
		w.WaitEvents(t, "events", 2)
		s.exec(t, "INSERT INTO events VALUES (16, 'late'), (2, 'too late'), (21, 'c')")
		w.WaitEvents(t, "events", 4)
		s.exec(t, "INSERT INTO events VALUES (30, 'd')")
		evs := w.WaitEvents(t, "events", 5)
		var names []string
		for _, e := range evs {
			names = append(names, e.Payload.(map[string]any)["name"].(string))
		}
		if got := strings.Join(names, ","); got != "a,b,late,c,d" {
			t.Errorf("events %s, want a,b,late,c,d", got)
		}
	})
}

// TestRoutingAndCursorsPerAsset: with route, each watched asset gets the
// rows whose route column matches its glob (a row matching none is
// skipped) and every asset's cursor moves; an asset whose cursor is set
// back gets the rows after its own cursor, the other nothing again.
func TestRoutingAndCursorsPerAsset(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s source) {
		s.insert(t, "1@2026-01-01 10:00:00@eu-west", "2@2026-01-01 10:00:01@us-east", "3@2026-01-01 10:00:02@apac", "4@2026-01-01 10:00:03@eu-north")
		w := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "eu"}, trigger.AssetInfo{Name: "us"})
		start(t, s, w, `{"route_column":"region","route":{"eu":"eu-*","us":"us-*"},"partition_column":"region",`+orders[1:])
		w.WaitEvents(t, "eu", 2)
		w.WaitEvents(t, "us", 1)
		if string(w.Cursor("eu")) != string(w.Cursor("us")) || !strings.Contains(string(w.Cursor("us")), `"key":4`) {
			t.Errorf("cursors eu %s, us %s, want both at row 4", w.Cursor("eu"), w.Cursor("us"))
		}
		if pk := w.Events("eu")[1].PartitionKey; pk != "eu-north" {
			t.Errorf("partition key %q, want the row's region eu-north", pk)
		}
		// back to row 1, in the form this engine's cursor has
		back := strings.Replace(strings.Replace(string(w.Cursor("us")), "10:00:03", "10:00:00", 1), `"key":4`, `"key":1`, 1)
		w.SetCursor("us", json.RawMessage(back))
		triggertest.ExpectFields(t, w.WaitEvents(t, "us", 2), "id", "2,2", "us after its cursor was set back: row 2 again")
		s.insert(t, "5@2026-01-01 10:00:04@eu-south")
		triggertest.ExpectFields(t, w.WaitEvents(t, "eu", 3), "id", "1,4,5", "eu (apac matched no route)")
	})
}

// TestAQueryIsWatched: a query's result is watched like a table, by its
// own column names.
func TestAQueryIsWatched(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s source) {
		s.insert(t, "1@2026-01-01 10:00:00@eu", "2@2026-01-01 10:00:00@test")
		w := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "orders"})
		start(t, s, w, `{"query":"SELECT id AS order_id, updated_at AS ts FROM orders WHERE region <> 'test';","updated_column":"ts","key_column":"order_id"}`)
		w.WaitEvents(t, "orders", 1)
		s.insert(t, "3@2026-01-01 11:00:00@eu")
		evs := w.WaitEvents(t, "orders", 2)
		if got := fmt.Sprint(evs[0].Payload.(map[string]any)["order_id"], evs[1].Payload.(map[string]any)["order_id"]); got != "1 3" {
			t.Errorf("events of order_id %s, want 1 3", got)
		}
	})
}

// TestASourceThatFailsIsRetried: while the table is missing every poll
// fails (recorded in health, the watcher keeps running); once it exists
// its rows arrive.
func TestASourceThatFailsIsRetried(t *testing.T) {
	t.Parallel()
	uri := "sqlite:///" + filepath.Join(t.TempDir(), "w.db")
	s := source{uri: uri, db: triggertest.OpenSQL(t, uri)}
	w := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "orders"})
	start(t, s, w, orders)
	wait.Until(t, triggertest.Bound, "two failed polls", func() bool { return len(w.PollErrors()) >= 2 })
	if err := w.PollErrors()[0]; !strings.Contains(err.Error(), "orders") || !strings.Contains(err.Error(), `connection "shop"`) {
		t.Errorf("poll error %q, want it to name the connection and the missing table", err)
	}
	s.exec(t, "CREATE TABLE orders (id INTEGER, updated_at TEXT, region TEXT)")
	s.insert(t, "1@2026-01-01 10:00:00")
	w.WaitEvents(t, "orders", 1)
}

// TestABadCursorIsAPollError: a cursor an admin set to something else is
// refused with a message, polled again, and nothing is recorded.
func TestABadCursorIsAPollError(t *testing.T) {
	t.Parallel()
	uri := "sqlite:///" + filepath.Join(t.TempDir(), "w.db")
	s := source{uri: uri, db: triggertest.OpenSQL(t, uri)}
	s.exec(t, "CREATE TABLE orders (id INTEGER, updated_at TEXT, region TEXT)")
	s.insert(t, "1@2026-01-01 10:00:00")
	w := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "orders"})
	w.SetCursor("orders", json.RawMessage(`"2026-01-01"`))
	start(t, s, w, orders)
	wait.Until(t, triggertest.Bound, "a failed poll", func() bool { return len(w.PollErrors()) >= 1 })
	if err := w.PollErrors()[0]; !strings.Contains(err.Error(), `asset orders: cursor "2026-01-01" is not a sql_incremental cursor`) {
		t.Errorf("poll error %q, want it to name the asset and the cursor", err)
	}
	w.SetCursor("orders", json.RawMessage(`{"updated":"2026-01-01 09:00:00","key":0}`))
	w.WaitEvents(t, "orders", 1)
}

// TestNotAWatcher: run for a deferral, the type ends with a clear error.
func TestNotAWatcher(t *testing.T) {
	t.Parallel()
	run := triggertest.Start(t, triggertest.New(t, sqlwatch.Type, `{"conn_id":"shop",`+orders[1:]), nil)
	if err := run.Wait(t); err == nil || !strings.Contains(err.Error(), "only as an asset watcher") {
		t.Errorf("Run = %v, want the watcher-only error", err)
	}
}

// TestABurstBeyondTheLookbackBound: 1,500 rows sharing one updated value
// (one bulk insert stamped now()) are each recorded once although the
// lookback window keeps at most 1,000 keys, and the cursor stays small.
func TestABurstBeyondTheLookbackBound(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s source) {
		var rows []string
		for i := 1; i <= 1500; i++ {
			rows = append(rows, fmt.Sprintf("%d@2026-01-01 10:00:00", i))
		}
		s.insert(t, rows...)
		w := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "orders"})
		start(t, s, w, `{"lookback":"1h",`+orders[1:])
		w.WaitEvents(t, "orders", 1500)
		s.insert(t, "1501@2026-01-01 10:00:01")
		evs := w.WaitEvents(t, "orders", 1501)
		seen := map[string]bool{}
		for _, e := range evs {
			id := fmt.Sprint(e.Payload.(map[string]any)["id"])
			if seen[id] {
				t.Errorf("row %s recorded twice", id)
			}
			seen[id] = true
		}
		if len(evs) != 1501 {
			t.Errorf("%d events, want 1501", len(evs))
		}
		if n := len(w.Cursor("orders")); n > 40<<10 {
			t.Errorf("cursor of %d bytes, want it bounded well under the 64 KiB limit", n)
		}
	})
}

// TestTextKeysAndTimestampsWithoutZone: a text key breaks ties, and a
// timestamp without time zone (PostgreSQL) or a text time (SQLite) keeps
// its place across polls.
func TestTextKeysAndTimestampsWithoutZone(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s source) {
		s.exec(t, "CREATE TABLE skus (code TEXT NOT NULL, changed TIMESTAMP NOT NULL)")
		s.exec(t, "INSERT INTO skus VALUES ('b-2', '2026-01-01 10:00:00.250'), ('a-1', '2026-01-01 10:00:00.250')")
		w := triggertest.NewWatcher("skus", trigger.AssetInfo{Name: "skus"})
		start(t, s, w, `{"table":"skus","updated_column":"changed","key_column":"code","lookback":"1m"}`)
		w.WaitEvents(t, "skus", 2)
		s.exec(t, "INSERT INTO skus VALUES ('c-3', '2026-01-01 10:00:00.250'), ('a-0', '2026-01-01 10:00:00.100')")
		w.WaitEvents(t, "skus", 4)
		s.exec(t, "INSERT INTO skus VALUES ('z', '2026-01-01 10:00:01')")
		triggertest.ExpectFields(t, w.WaitEvents(t, "skus", 5), "code", "a-1,b-2,a-0,c-3,z", "the late a-0 and the tie c-3 caught, by changed then code")
	})
}
