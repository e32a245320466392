package chaos

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the cursor checker's PostgreSQL connection

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// watchedItems is how many lines arrive in the watched file per scenario.
const watchedItems = 500

// The example program (examples/sdk) is a weir binary with the go_watcher
// DAG: its asset jsonl_orders is watched by jsonl_tail, a poll-function
// watcher whose cursor is the byte offset after the last line committed.
const (
	watcherDag   = "go_watcher"
	watchedAsset = "jsonl_orders"
	cursorKey    = "watcher/tail/cursor"
)

var sdkBin = sync.OnceValues(func() (string, error) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return "", err
	}
	bin, _, err := weirtest.BuildPackage(root, "./examples/sdk") // removed with the test's temporary files
	return bin, err
})

// TestWatcherSIGKILL: while 500 lines arrive in a watched file, the
// triggerer (of a deployment on PostgreSQL) or standalone (on SQLite) is
// SIGKILLed -chaos.kills times at random moments and restarted. A checker
// reads the committed cursor and the asset's events in one statement every
// few milliseconds throughout: the lines before the cursor must be exactly
// the events committed (never a cursor ahead of its events, never an event
// the cursor does not cover). Afterwards every line has exactly one event,
// and every event was consumed by exactly one successful run of the
// consumer DAG.
func TestWatcherSIGKILL(t *testing.T) {
	t.Parallel()
	bin, err := sdkBin()
	if err != nil {
		t.Fatal(err)
	}
	for _, victim := range []string{standalone.name, "triggerer"} {
		t.Run(victim, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "orders.jsonl")
			o := deploymentOptions{bin: bin, heartbeatTimeout: shortHeartbeatTimeout,
				env: []string{"WEIR_EXAMPLE_ORDERS=" + file, "WEIR_EXAMPLE_POLL=100ms"}}
			if victim != standalone.name {
				o.postgres = pgtest.DSN(t)
			}
			d := deploy(t, "watcher sigkill "+victim, o)
			defer d.finish()
			d.api.WaitDAG(watcherDag)
			d.api.Call(http.MethodPatch, "/api/v2/dags/"+watcherDag, map[string]any{"is_paused": false}, nil)

			db := d.openDB(o.postgres)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var checks int
			var checkErrs []string
			wg.Add(2)
			go func() { defer wg.Done(); produce(t, d, file, stop) }()
			go func() { defer wg.Done(); checks, checkErrs = watchCursor(db, file, stop) }()
			for d.fig.faults < *killsFlag {
				d.pause(50*time.Millisecond, 1500*time.Millisecond)
				d.kill(victim)
			}
			d.fig.trials++
			// Let the rest arrive and be committed, then stop the checker.
			weirtest.WaitWithin(t, 3*weirtest.WaitLong, "every line to be committed", func() (bool, string) {
				_, n, err := snapshot(db)
				return err == nil && n == watchedItems, fmt.Sprintf("%d events, %v", n, err)
			})
			close(stop)
			wg.Wait()
			t.Logf("%s: %d cursor checks during %d kills", d.scenario, checks, d.fig.faults)
			bad := append(checkErrs, d.checkWatched()...)
			bad = append(bad, d.checkDatabase()...)
			for _, b := range bad {
				t.Errorf("%s: anomaly: %s", d.scenario, b)
			}
			d.fig.anomalies += len(bad)
		})
	}
}

// produce appends watchedItems lines {"item": i} to file, one write each,
// every 20-100 ms, until done (or stop).
func produce(t *testing.T, d *deployment, file string, stop <-chan struct{}) {
	f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	for i := range watchedItems {
		if _, err := fmt.Fprintf(f, "{\"item\": %d}\n", i); err != nil {
			t.Error(err)
			return
		}
		select {
		case <-stop:
			return
		case <-time.After(20*time.Millisecond + time.Duration(d.rng.Int64N(int64(80*time.Millisecond)))):
		}
	}
}

// openDB opens the deployment's database for the checker's reads.
func (d *deployment) openDB(dsn string) *sql.DB {
	d.t.Helper()
	driver, src := "pgx", dsn
	if dsn == "" {
		driver, src = "sqlite", "file:"+filepath.Join(d.home, "weir.db")+"?mode=ro"
	}
	db, err := sql.Open(driver, src)
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { _ = db.Close() })
	return db
}

// snapshot reads the committed cursor's offset and the asset's number of
// events in one statement: one consistent view of the database.
func snapshot(db *sql.DB) (offset int64, events int, err error) {
	var cursor string
	err = db.QueryRow(`SELECT COALESCE((SELECT s.value FROM asset_state_store s JOIN asset a ON a.id = s.asset_id
			WHERE a.name = '`+watchedAsset+`' AND s.key = '`+cursorKey+`'), '{}'),
		(SELECT COUNT(*) FROM asset_event e JOIN asset a ON a.id = e.asset_id WHERE a.name = '`+watchedAsset+`')`).
		Scan(&cursor, &events)
	if err != nil {
		return 0, 0, err
	}
	var c struct{ Offset int64 }
	if err := json.Unmarshal([]byte(cursor), &c); err != nil {
		return 0, 0, fmt.Errorf("cursor %q: %w", cursor, err)
	}
	return c.Offset, events, nil
}

// watchCursor checks snapshots until stop: the lines of file before the
// committed offset must number the events committed. It returns how many
// snapshots it checked and every mismatch (a read error while the
// database restarts is not one).
func watchCursor(db *sql.DB, file string, stop <-chan struct{}) (int, []string) {
	var bad []string
	n := 0
	for {
		select {
		case <-stop:
			return n, bad
		case <-time.After(15 * time.Millisecond):
		}
		offset, events, err := snapshot(db)
		if err != nil {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil || int64(len(data)) < offset {
			bad = append(bad, fmt.Sprintf("cursor offset %d is past the file's %d bytes (%v)", offset, len(data), err))
			continue
		}
		n++
		if lines := strings.Count(string(data[:offset]), "\n"); lines != events {
			bad = append(bad, fmt.Sprintf("the committed cursor covers %d lines but %d events are committed", lines, events))
		}
	}
}

// eventsOf lists the events of the asset named name.
func (d *deployment) eventsOf(name string) []core.AssetEvent {
	var out []core.AssetEvent
	for _, e := range d.listEvents(url.Values{}) {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// checkWatched: every line has exactly one event, and every event was
// consumed by exactly one run of the consumer, each of which succeeded.
func (d *deployment) checkWatched() []string {
	var bad []string
	seen := map[int]int{}
	ids := map[int64]bool{}
	for _, e := range d.eventsOf(watchedAsset) {
		var x struct{ Item *int }
		if json.Unmarshal(e.Extra, &x) != nil || x.Item == nil {
			bad = append(bad, fmt.Sprintf("event %d has extra %s, not a line", e.ID, e.Extra))
			continue
		}
		seen[*x.Item]++
		ids[e.ID] = true
	}
	for i := range watchedItems {
		if seen[i] != 1 {
			bad = append(bad, fmt.Sprintf("line %d has %d events, want 1", i, seen[i]))
		}
	}
	var runs struct {
		DagRuns []core.DagRun `json:"dag_runs"`
	}
	consumed := map[int64]int{}
	weirtest.WaitWithin(d.t, 3*weirtest.WaitLong, "the consumer runs to finish", func() (bool, string) {
		d.api.Get("/api/v2/dags/"+watcherDag+"/dagRuns?limit=1000", &runs)
		total := 0
		for _, r := range runs.DagRuns {
			if !r.State.Terminal() {
				return false, "run " + r.RunID + " is " + string(r.State)
			}
			var evs struct {
				AssetEvents []core.AssetEvent `json:"asset_events"`
			}
			d.api.Get(weirtest.RunPath(watcherDag, r.RunID)+"/upstreamAssetEvents?limit=1000", &evs)
			total += len(evs.AssetEvents)
		}
		return total == len(ids), fmt.Sprintf("%d of %d events consumed by %d runs", total, len(ids), len(runs.DagRuns))
	})
	for _, r := range runs.DagRuns {
		d.fig.runs++
		if r.State != core.RunSuccess {
			bad = append(bad, fmt.Sprintf("consumer run %s ended %s", r.RunID, r.State))
		}
		var evs struct {
			AssetEvents []core.AssetEvent `json:"asset_events"`
		}
		d.api.Get(weirtest.RunPath(watcherDag, r.RunID)+"/upstreamAssetEvents?limit=1000", &evs)
		for _, e := range evs.AssetEvents {
			consumed[e.ID]++
		}
	}
	for id := range ids {
		if consumed[id] != 1 {
			bad = append(bad, "event "+strconv.FormatInt(id, 10)+" was consumed by "+strconv.Itoa(consumed[id])+" runs, want 1")
		}
	}
	return bad
}
