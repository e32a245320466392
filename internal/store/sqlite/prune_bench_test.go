package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the raw connection that seeds the chunks

	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlite"
	"github.com/weirflow/weir/internal/testutil/secretstest"
)

// BenchmarkTaskLogPrune measures what one prune holds: the whole-table
// prune it replaced (every log's last write in one statement, on the
// writer) against one batch of the walk (500 logs read, then the old ones
// deleted), over WEIR_BENCH_PRUNE_CHUNKS chunks (default 100,000) of
// 300-byte lines, two a log, none old enough to go:
//
//	WEIR_BENCH_PRUNE_CHUNKS=1000000 go test -run '^$' -bench TaskLogPrune -benchtime 5x ./internal/store/sqlite/
func BenchmarkTaskLogPrune(b *testing.B) {
	chunks := 100_000
	if v, err := strconv.Atoi(os.Getenv("WEIR_BENCH_PRUNE_CHUNKS")); err == nil && v > 0 {
		chunks = v
	}
	path := filepath.Join(b.TempDir(), "weir.db")
	st, err := sqlite.Open(b.Context(), path, sqlite.Options{Secrets: secretstest.Box()})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(b.Context()); err != nil {
		b.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	now := time.Now()
	if _, err := raw.ExecContext(b.Context(), `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $1 - 1)
		INSERT INTO task_log_chunk (log_key, start_at, end_at, data, created_at)
		SELECT printf('dag_id=d/run_id=r%07d/task_id=t/attempt=1.log', i / 2), (i % 2) * 300, (i % 2) * 300 + 300,
			randomblob(300), $2 FROM n`, chunks, now.UnixMicro()); err != nil {
		b.Fatal(err)
	}
	before := now.Add(-time.Hour)
	b.Run("whole table", func(b *testing.B) {
		for b.Loop() {
			if _, err := raw.ExecContext(b.Context(), `DELETE FROM task_log_chunk WHERE log_key IN (
				SELECT log_key FROM task_log_chunk GROUP BY log_key HAVING MAX(created_at) < $1)`, before.UnixMicro()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("one batch", func(b *testing.B) {
		after := ""
		for b.Loop() {
			res, err := st.TaskLogPrune(b.Context(), &store.TaskLogPruneParams{Before: before, After: after, Limit: 500})
			if err != nil {
				b.Fatal(err)
			}
			after = res.Next
		}
	})
}
