package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/store/sqlite"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

// openWithInterval opens a migrated store whose checkpointer waits interval.
func openWithInterval(t *testing.T, interval time.Duration) (*sqlstore.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "weir.db")
	st, err := sqlite.Open(t.Context(), path, sqlite.Options{CheckpointInterval: interval})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().ExecContext(t.Context(), `CREATE TABLE scratch (b BLOB)`); err != nil {
		t.Fatal(err)
	}
	return st, path
}

// writeMiB commits n MiB of 64 KiB blobs, one transaction a blob.
func writeMiB(t *testing.T, st *sqlstore.Store, n int) {
	t.Helper()
	blob := []byte(strings.Repeat("w", 64<<10))
	for range n * 16 {
		if _, err := st.DB().ExecContext(t.Context(), `INSERT INTO scratch (b) VALUES (?)`, blob); err != nil {
			t.Fatal(err)
		}
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestCommitsDoNotCheckpoint: a commit that takes the WAL past SQLite's
// automatic checkpoint (1,000 pages, 4 MiB) does not copy it into the
// database file: the copy, with its fsyncs, would hold the one writer (ADR
// 0031). The checkpointer's interval is longer than the test.
func TestCommitsDoNotCheckpoint(t *testing.T) {
	st, path := openWithInterval(t, time.Hour)
	before := fileSize(t, path)
	writeMiB(t, st, 6)
	if got := fileSize(t, path); got != before {
		t.Fatalf("database file grew from %d to %d bytes while writing: a commit checkpointed the WAL", before, got)
	}
	if wal := fileSize(t, path+"-wal"); wal < 6<<20 {
		t.Fatalf("WAL is %d bytes after 6 MiB of commits; want them all there", wal)
	}
}

// TestCheckpointerCopiesTheWAL: an interval after a write, the checkpointer
// has copied the WAL into the database file, and under continued writes the
// WAL is reused rather than grown with everything written.
func TestCheckpointerCopiesTheWAL(t *testing.T) {
	st, path := openWithInterval(t, 10*time.Millisecond)
	writeMiB(t, st, 2) // below the 4 MiB at which SQLite itself would have checkpointed
	deadline := time.Now().Add(10 * time.Second)
	for fileSize(t, path) < 2<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("database file is %d bytes 10 s after 2 MiB of commits: the WAL was not checkpointed", fileSize(t, path))
		}
		time.Sleep(10 * time.Millisecond)
	}
	for range 24 {
		writeMiB(t, st, 1)
		time.Sleep(50 * time.Millisecond)
	}
	if wal := fileSize(t, path+"-wal"); wal > 12<<20 {
		t.Errorf("WAL is %d bytes after 24 MiB written a MiB at a time: it is not being reused", wal)
	}
	var n int
	if err := st.DB().QueryRowContext(t.Context(), `SELECT count(*) FROM scratch`).Scan(&n); err != nil || n != 26*16 {
		t.Fatalf("scratch holds %d blobs (err %v), want %d", n, err, 26*16)
	}
}

// TestWALStaysBoundedUnderSteadyWrites: commits that keep coming (with a
// reader polling) overtake every passive checkpoint, so none leaves the WAL
// wholly copied and SQLite never starts it over by itself; the checkpointer
// finishes the copy on the writer once the WAL passes restartPages
// (16 MiB), so it does not grow with what is written (32 MiB of rows here,
// about 60 MiB of WAL without it).
func TestWALStaysBoundedUnderSteadyWrites(t *testing.T) {
	st, path := openWithInterval(t, 10*time.Millisecond)
	reader, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			var n int
			_ = reader.QueryRowContext(t.Context(), `SELECT count(*) FROM scratch`).Scan(&n)
			time.Sleep(2 * time.Millisecond)
		}
	}()
	blob := []byte(strings.Repeat("w", 4<<10))
	for i := range 8 << 10 { // 32 MiB in 4 KiB commits, a short pause every fourth
		if _, err := st.DB().ExecContext(t.Context(), `INSERT INTO scratch (b) VALUES (?)`, blob); err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 {
			time.Sleep(200 * time.Microsecond)
		}
	}
	close(stop)
	<-done
	// 16 MiB and what the commits add during one cycle of the checkpointer
	// (more on a loaded machine); without its step on the writer the WAL
	// grows to the writer's 64 MiB backstop.
	if wal := fileSize(t, path+"-wal"); wal > 44<<20 {
		t.Fatalf("WAL is %d MiB after 32 MiB of steady commits: it is not started over", wal>>20)
	}
}

// TestCloseLeavesAnEmptyWAL: the last connection to close checkpoints and
// empties the WAL but keeps it and the -shm (persistWAL): the database file
// alone, copied as a backup would be, holds every commit.
func TestCloseLeavesAnEmptyWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir.db")
	st, err := sqlite.Open(t.Context(), path, sqlite.Options{CheckpointInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().ExecContext(t.Context(), `CREATE TABLE scratch (b TEXT)`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().ExecContext(t.Context(), `INSERT INTO scratch (b) VALUES ('kept')`); err != nil {
		t.Fatal(err)
	}
	if fileSize(t, path+"-wal") == 0 {
		t.Fatal("the commits are not in the WAL (the checkpointer's interval is an hour)")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if n := fileSize(t, path+"-wal"); n != 0 {
		t.Errorf("the WAL holds %d bytes after close, want it emptied", n)
	}
	if _, err := os.Stat(path + "-shm"); err != nil {
		t.Errorf("the -shm after close: %v, want it kept", err)
	}
	backup := filepath.Join(t.TempDir(), "copy.db")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(backup, b, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+backup+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got string
	if err := db.QueryRowContext(t.Context(), `SELECT b FROM scratch`).Scan(&got); err != nil || got != "kept" {
		t.Fatalf("the database file alone after close: %q (%v), want the committed row", got, err)
	}
}
