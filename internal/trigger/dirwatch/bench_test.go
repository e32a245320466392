package dirwatch_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/dirwatch"
	"github.com/weirflow/weir/internal/trigger/triggertest"
)

// BenchmarkPollOfAFolderWithNothingNew: the cost of one poll that finds
// nothing new in a folder of 10,000 files (what a watcher pays every
// poll_interval once caught up).
func BenchmarkPollOfAFolderWithNothingNew(b *testing.B) {
	dir := b.TempDir()
	for i := range 10000 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.csv", i)), []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	tr := triggertest.New(b, dirwatch.Type, `{"path":"`+dir+`","poll_interval":"1h","max_items":10000}`)
	w := triggertest.NewWatcher("landing", trigger.AssetInfo{Name: "a"})
	run := w.Start(b, tr, nil)
	w.WaitEvents(b, "a", 10000)
	run.Cancel(b)
	b.ReportAllocs()
	for b.Loop() {
		_, err := dirwatch.Poll(b.Context(), tr, w.Watched())
		if err != nil {
			b.Fatal(err)
		}
	}
}
