package sqlite

import (
	"database/sql"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sqlite "modernc.org/sqlite"
)

// A store gone quiet after a WAL past restartPages, all of it copied, is
// left alone: the checkpointer does not take the writer (whose statement
// would note a write and schedule the next round, for ever); the next
// write starts the WAL over by itself.
func TestQuietStoreLeavesTheWriterAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir.db")
	opts := Options{BusyTimeout: 5 * time.Second, CheckpointInterval: time.Hour}
	st, err := Open(t.Context(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.DB().ExecContext(t.Context(), `CREATE TABLE scratch (b BLOB)`); err != nil {
		t.Fatal(err)
	}
	blob := []byte(strings.Repeat("w", 64<<10))
	for range 320 { // 20 MiB: past restartPages
		if _, err := st.DB().ExecContext(t.Context(), `INSERT INTO scratch (b) VALUES (?)`, blob); err != nil {
			t.Fatal(err)
		}
	}
	side := sql.OpenDB(cachingConnector{dsn: dsn(path, opts, nil), drv: &sqlite.Driver{}})
	defer side.Close()
	var taken atomic.Int32
	writer := sql.OpenDB(cachingConnector{dsn: dsn(path, opts, nil), drv: &sqlite.Driver{}, wrote: func() { taken.Add(1) }})
	defer writer.Close()
	for range 3 {
		if err := checkpoint(t.Context(), side, writer); err != nil {
			t.Fatal(err)
		}
	}
	if n := taken.Load(); n != 0 {
		t.Fatalf("the checkpoints of a quiet store took the writer %d times", n)
	}
}
