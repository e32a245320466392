package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for the watched PostgreSQL table
	"github.com/minio/minio-go/v7"

	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/s3test"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// TestWatchersStartConsumersWithTheirEvents runs one asset watcher of each
// built-in kind in standalone, on SQLite and on PostgreSQL: files dropped
// in a folder, objects put in SeaweedFS, rows inserted into a PostgreSQL
// and a SQLite table, and items appearing at an HTTP endpoint each start
// their consumer DAG, whose shell task sees the events that started it
// (payload and partition key) in WEIR_TRIGGERING_ASSET_EVENTS. Items added
// in two rounds are each seen exactly once across the runs.
func TestWatchersStartConsumersWithTheirEvents(t *testing.T) {
	t.Parallel()
	onEachEngine(t, runWatchers)
}

// watchedSource is one watched kind: how to add item i (in partition
// part), and which extra field names the item in its event.
type watchedSource struct {
	name    string
	trigger string
	add     func(i int, part string)
	field   string
}

func runWatchers(t *testing.T, env []string) {
	dags, home, data := t.TempDir(), t.TempDir(), t.TempDir()
	landing := filepath.Join(data, "landing")
	if err := os.MkdirAll(landing, 0o755); err != nil {
		t.Fatal(err)
	}
	lite, shop := filepath.Join(data, "source.db"), pgtest.DSN(t)
	lake := s3test.URL(t, "")
	bucket := strings.SplitN(strings.TrimPrefix(lake, "s3://"), "@", 2)[1]
	bucket = bucket[:strings.IndexAny(bucket, "/?")]
	feed := newFeed(t)
	env = append(env, "WEIR_CONN_LITE=sqlite:///"+lite, "WEIR_CONN_SHOP="+shop, "WEIR_CONN_LAKE="+lake,
		"WEIR__CORE__DAGS_ARE_PAUSED_AT_CREATION=false")
	liteDB := openSource(t, "sqlite", "file:"+lite+"?_pragma=busy_timeout(10000)")
	shopDB := openSource(t, "pgx", shop)
	for _, db := range []*sql.DB{liteDB, shopDB} {
		if _, err := db.Exec(`CREATE TABLE orders (id INTEGER PRIMARY KEY, updated_at INTEGER NOT NULL, region TEXT NOT NULL)`); err != nil {
			t.Fatal(err)
		}
	}
	insert := func(db *sql.DB) func(int, string) {
		return func(i int, part string) {
			if _, err := db.Exec(fmt.Sprintf(`INSERT INTO orders VALUES (%d, %d, '%s')`, i, i, part)); err != nil {
				t.Fatal(err)
			}
		}
	}
	sources := []watchedSource{
		{name: "files", field: "name",
			trigger: fmt.Sprintf(`{type: directory, path: %q, glob: "*.csv", partition_key: "^([a-z]+)_", poll_interval: 200ms}`, landing),
			add: func(i int, part string) {
				writeFile(t, filepath.Join(landing, fmt.Sprintf("%s_%d.csv", part, i)), "a,b\n")
			}},
		{name: "objects", field: "key",
			trigger: `{type: s3_keys, conn_id: lake, glob: "in/*.json", partition_key: "in/([a-z]+)_", min_age: 0s, poll_interval: 200ms}`,
			add: func(i int, part string) {
				if _, err := s3test.Client(t).PutObject(context.Background(), bucket, fmt.Sprintf("in/%s_%d.json", part, i),
					bytes.NewReader([]byte("{}")), 2, minio.PutObjectOptions{}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "pg_rows", field: "id", add: insert(shopDB),
			trigger: `{type: sql_incremental, conn_id: shop, table: orders, updated_column: updated_at, key_column: id, partition_column: region, poll_interval: 200ms}`},
		{name: "lite_rows", field: "id", add: insert(liteDB),
			trigger: `{type: sql_incremental, conn_id: lite, table: orders, updated_column: updated_at, key_column: id, partition_column: region, poll_interval: 200ms}`},
		{name: "http_items", field: "id", add: feed.add,
			trigger: fmt.Sprintf(`{type: http_json, url: %q, items: ".data[]", cursor: ".updated", id: ".id", partition_key: ".region", poll_interval: 200ms}`, feed.srv.URL)},
	}
	for _, src := range sources {
		writeFile(t, filepath.Join(dags, src.name+".yaml"), fmt.Sprintf(`dag_id: on_%[1]s
schedule: [%[1]s]
assets:
  - name: %[1]s
    watchers:
      - name: w
        trigger: %[2]s
tasks:
  - task_id: record
    operator: bash
    bash_command: 'echo "$WEIR_TRIGGERING_ASSET_EVENTS" >> %[3]q; weir assets triggering-events >> %[4]q'
`, src.name, src.trigger, filepath.Join(data, "seen-"+src.name+".jsonl"), filepath.Join(data, "cli-"+src.name+".jsonl")))
	}
	s := startStandalone(t, home, dags, env...)
	for _, src := range sources {
		s.api.WaitDAG("on_" + src.name)
	}
	for round, items := range [][]int{{1, 2}, {3}} {
		for _, src := range sources {
			for _, i := range items {
				src.add(i, []string{"eu", "us"}[i%2])
			}
		}
		want := 2 + round
		for _, src := range sources {
			weirtest.WaitFor(t, fmt.Sprintf("%d items of %s seen by consumer runs", want, src.name), func() (bool, string) {
				seen := seenItems(t, filepath.Join(data, "seen-"+src.name+".jsonl"), src.field)
				cli := seenItems(t, filepath.Join(data, "cli-"+src.name+".jsonl"), src.field) // written after
				return len(seen) >= want && len(cli) >= want, fmt.Sprint(seen, cli)
			})
		}
	}
	for _, src := range sources {
		// What the in-task CLI printed (one event a line) is what the
		// variable held.
		seen := seenItems(t, filepath.Join(data, "seen-"+src.name+".jsonl"), src.field)
		if cli := seenItems(t, filepath.Join(data, "cli-"+src.name+".jsonl"), src.field); !maps.Equal(cli, seen) {
			t.Errorf("%s: weir assets triggering-events printed %v, the variable held %v", src.name, cli, seen)
		}
		if len(seen) != 3 {
			t.Errorf("%s: consumer runs saw %v, want each of 3 items once", src.name, seen)
		}
		for item, n := range seen {
			if n.count != 1 {
				t.Errorf("%s: item %s seen %d times, want once", src.name, item, n.count)
			}
			if n.partition != "eu" && n.partition != "us" || n.source != "watcher" {
				t.Errorf("%s: item %s has partition %q, source %q; want eu or us from the watcher", src.name, item, n.partition, n.source)
			}
		}
	}
}

// seenRecord is how often an item was seen and with what partition key.
type seenRecord struct {
	count             int
	partition, source string
}

// seenItems reads the lists of events the consumer runs recorded (or the
// events, one a line), by the item's extra field.
func seenItems(t *testing.T, path, field string) map[string]seenRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]seenRecord{}
	// Only complete lines: a consumer's shell opens the file (>>) before it
	// writes its line, so a read in between sees an empty or partial one.
	complete := string(b[:max(bytes.LastIndexByte(b, '\n'), 0)])
	for line := range strings.SplitSeq(complete, "\n") {
		if line == "" {
			continue
		}
		var events []struct {
			Extra        map[string]any `json:"extra"`
			PartitionKey string         `json:"partition_key"`
			SourceKind   string         `json:"source_kind"`
		}
		if strings.HasPrefix(line, "{") { // a line of weir assets triggering-events: one event
			line = "[" + line + "]"
		}
		if err := json.Unmarshal([]byte(line), &events); err != nil {
			t.Fatalf("a consumer recorded %q, not a list of events: %v", line, err)
		}
		for _, e := range events {
			item := fmt.Sprint(e.Extra[field])
			r := out[item]
			r.count++
			r.partition, r.source = e.PartitionKey, e.SourceKind
			out[item] = r
		}
	}
	return out
}

func openSource(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// feed is an HTTP endpoint listing items {id, updated, region} as
// {"data": [...]}, growing as the test adds them.
type feed struct {
	mu    sync.Mutex
	items []map[string]any
	srv   *httptest.Server
}

func newFeed(t *testing.T) *feed {
	f := &feed{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"data": f.items})
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *feed) add(i int, part string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.items = append(f.items, map[string]any{"id": i, "region": part,
		"updated": time.Now().UTC().Format(time.RFC3339Nano)})
}
