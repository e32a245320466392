package weir

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

// goStreamBatches runs examples/sdk's go_stream_batches with `bin dags
// test` on engine (sqlite or postgres), its first try failing on the
// batch holding event 37: the batch handler got the events in batches of
// several, in order; the first try's successful batches are recorded and
// never handled again; the retry's first batch starts at the failed
// batch's first event; every event 1..100 is inserted exactly once (the
// table's primary key refuses a second insert) and load succeeds on its
// second try.
func goStreamBatches(t *testing.T, bin, engine string) {
	env := engineEnv(t, engine)
	home := t.TempDir()
	path := filepath.Join(home, "batches.db")
	conf := fmt.Sprintf(`{"db": %q, "fail_at": 37}`, path)
	rows := dagsTestEnv(t, bin, home, env, "go_stream_batches", "--conf", conf)
	assertRows(t, rows, map[string]string{"load": "success 2"})
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	res, err := db.QueryContext(t.Context(), "SELECT seq, n, try, batch_first FROM batch_events ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Close() }()
	var seq, n, try, first, retryFirst int64
	batches, count := map[int64]bool{}, 0
	retryFirst = -1
	for res.Next() {
		if err := res.Scan(&seq, &n, &try, &first); err != nil {
			t.Fatal(err)
		}
		if seq != int64(count) || n != seq+1 {
			t.Fatalf("row %d is event %d (n %d): want every event once, in order", count, seq, n)
		}
		if try == 2 && retryFirst < 0 {
			retryFirst = first
			if first != seq {
				t.Errorf("the retry's first batch starts at %d, but its first row is event %d", first, seq)
			}
		}
		if (try == 1) != (retryFirst < 0) {
			t.Errorf("event %d was inserted by try %d after the retry began at %d", seq, try, retryFirst)
		}
		batches[first] = true
		count++
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	if count != 100 || retryFirst < 0 || retryFirst > 36 {
		t.Fatalf("%d events inserted, the retry from %d: want 100, the retry from the failed batch's first event (≤ 36)", count, retryFirst)
	}
	if len(batches) >= count {
		t.Errorf("%d batches for %d events: want the handler to get several events per call", len(batches), count)
	}
}
