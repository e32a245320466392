package triggerer_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/wait"
	"github.com/weirflow/weir/internal/trigger/builtin"
)

// TestDirectoryWatcherCommitsEachFileOnceAcrossARestart: on each engine,
// files dropped in a watched folder become events of the asset (extra:
// the file's path, name, size and time), its consumer is queued, and a
// triggerer started after the first stopped resumes from the committed
// cursor: each file is one event.
func TestDirectoryWatcherCommitsEachFileOnceAcrossARestart(t *testing.T) {
	for name, open := range engines() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			reg := builtin.Registry()
			svc := service.New(service.Config{Store: st, Triggers: reg})
			dir := t.TempDir()
			drop(t, dir, "a.csv", "1")
			drop(t, dir, "b.csv", "22")
			kwargs, _ := json.Marshal(map[string]any{"path": dir, "glob": "*.csv", "poll_interval": "20ms"})
			watchDag(t, st, "load", core.Asset{Name: "orders", URI: "file://" + dir, Watchers: []core.AssetWatcher{{Name: "landing",
				Trigger: core.TriggerSpec{Type: "directory", Kwargs: kwargs}}}})
			_, stop := start(t, st, svc, reg, 0)
			wait.Until(t, 60*time.Second, "the two files' events", func() bool { return len(fileEvents(t, st)) >= 2 })
			a := fileEvents(t, st)[0]
			if a["path"] != filepath.Join(dir, "a.csv") || a["name"] != "a.csv" || a["size"] != 1.0 || a["modified"] == nil {
				t.Errorf("extra of a.csv's event = %v, want its path, name, size and time", a)
			}
			if q, err := st.AssetQueueList(t.Context(), "load"); err != nil || len(q) != 1 {
				t.Errorf("consumer queue = %+v, %v; want the events queued for load", q, err)
			}
			stop()

			drop(t, dir, "c.csv", "333")
			start(t, st, svc, reg, 0)
			wait.Until(t, 60*time.Second, "c.csv's event", func() bool { return len(fileEvents(t, st)) >= 3 })
			var names []any
			for _, e := range fileEvents(t, st) {
				names = append(names, e["name"])
			}
			if fmt.Sprint(names) != "[a.csv b.csv c.csv]" {
				t.Errorf("events = %v, want a.csv, b.csv, c.csv once each", names)
			}
			var cursor struct{ Keys []string }
			if err := json.Unmarshal(watcherOf(t, st, "orders").Cursor, &cursor); err != nil || fmt.Sprint(cursor.Keys) != "[c.csv]" {
				t.Errorf("cursor = %s, want the time of c.csv with its key", watcherOf(t, st, "orders").Cursor)
			}
		})
	}
}

// drop writes a file whole then moves it into dir, as a producer should.
func drop(t *testing.T, dir, name, content string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	must(t, os.WriteFile(tmp, []byte(content), 0o644))
	must(t, os.Rename(tmp, filepath.Join(dir, name)))
}

// fileEvents returns the extras of asset orders' events, in order.
func fileEvents(t *testing.T, st store.Store) []map[string]any {
	t.Helper()
	a, err := st.AssetGetByName(t.Context(), "orders")
	must(t, err)
	evs, err := st.AssetEventList(t.Context(), &store.AssetEventListParams{AssetID: a.ID})
	must(t, err)
	var out []map[string]any
	for _, e := range evs {
		var m map[string]any
		must(t, json.Unmarshal(e.Extra, &m))
		out = append(out, m)
	}
	return out
}
