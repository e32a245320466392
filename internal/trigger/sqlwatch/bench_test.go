package sqlwatch_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/sqlwatch"
	"github.com/weirflow/weir/internal/trigger/triggertest"
)

// BenchmarkBurstOf10000Rows: how fast one watcher reads a burst of 10,000
// rows (max_items 1000, poll_interval 1ms) into batches, without and with
// a lookback window that covers the whole burst; the commits are in
// memory (triggertest.Watcher), so this is the source side only.
func BenchmarkBurstOf10000Rows(b *testing.B) {
	for _, c := range []struct{ engine, lookback string }{{"sqlite", ""}, {"sqlite", "1h"}, {"postgres", ""}, {"postgres", "1h"}} {
		engine := c.engine
		kwargs := `{"conn_id":"shop","table":"orders","updated_column":"updated_at","key_column":"id","poll_interval":"1ms"}`
		name := engine
		if c.lookback != "" {
			kwargs = strings.Replace(kwargs, "{", `{"lookback":"`+c.lookback+`",`, 1)
			name += "/lookback"
		}
		b.Run(name, func(b *testing.B) {
			uri := "sqlite:///" + filepath.Join(b.TempDir(), "w.db")
			if engine == "postgres" {
				uri = pgtest.DSN(b)
			}
			db := triggertest.OpenSQL(b, uri)
			if _, err := db.Exec("CREATE TABLE orders (id INTEGER NOT NULL, updated_at TEXT NOT NULL, region TEXT)"); err != nil {
				b.Fatal(err)
			}
			for chunk := 0; chunk < 10; chunk++ {
				var values []string
				for i := 1; i <= 1000; i++ {
					id := chunk*1000 + i
					values = append(values, fmt.Sprintf("(%d, '2026-01-01 10:%02d:%02d', 'eu')", id, id/600%60, id/10%60))
				}
				if _, err := db.Exec("INSERT INTO orders VALUES " + strings.Join(values, ", ")); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				w := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "orders"})
				tr := triggertest.New(b, sqlwatch.Type, kwargs)
				run := w.Start(b, tr, &trigger.Runtime{Connections: triggertest.Conns{"shop": uri}})
				w.WaitEvents(b, "orders", 10000)
				run.Cancel(b)
			}
			b.ReportMetric(float64(10000*b.N)/time.Since(start).Seconds(), "rows/s")
		})
	}
}
