package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// testTaskLog: a log kept in the database grows by appends at its end; a
// chunk sent again (whole or in part) stores only the new bytes; a chunk
// past the end is refused naming the length; reads page by limit from
// any offset; a missing log is not found; pruning deletes whole logs last
// written before the cut-off.
func testTaskLog(t *testing.T, f *fixture) {
	const key = "dag_id=etl/run_id=r1/task_id=load/attempt=1.log"
	appendAt := func(offset int64, data string, at time.Duration) (int64, error) {
		return f.st.TaskLogAppend(f.ctx, &store.TaskLogAppendParams{Key: key, Offset: offset, Data: []byte(data), Now: f.at(at)})
	}
	_, _, err := f.st.TaskLogRead(f.ctx, key, 0, 100)
	wantErr(t, err, core.ErrNotFound, "read a log never written")
	steps := []struct {
		offset int64
		data   string
		next   int64
	}{
		{0, "hello ", 6},
		{6, "world\n", 12},
		{0, "hello ", 12},         // sent again after a lost answer
		{6, "world\nagain\n", 18}, // in part new
		{18, "", 18},
	}
	for _, s := range steps {
		next, err := appendAt(s.offset, s.data, 0)
		must(t, err, "append")
		if next != s.next {
			t.Errorf("append %q at %d: next %d, want %d", s.data, s.offset, next, s.next)
		}
	}
	next, err := appendAt(30, "late", 0)
	if !errors.Is(err, core.ErrConflict) || next != 18 {
		t.Errorf("append past the end: next %d, %v; want a gap naming length 18", next, err)
	}
	var got []byte
	for offset := int64(0); ; {
		data, n, err := f.st.TaskLogRead(f.ctx, key, offset, 5)
		must(t, err, "read")
		if len(data) > 5 {
			t.Fatalf("read %d bytes, limit 5", len(data))
		}
		if len(data) == 0 {
			if n != offset {
				t.Errorf("read at the end moved the offset %d to %d", offset, n)
			}
			break
		}
		got, offset = append(got, data...), n
	}
	if string(got) != "hello world\nagain\n" {
		t.Errorf("log read in pieces = %q", got)
	}
	if size, err := f.st.TaskLogSize(f.ctx, key); err != nil || size != 18 {
		t.Errorf("size = %d, %v; want 18", size, err)
	}
	const other = "dag_id=etl/run_id=r1/task_id=load/attempt=2.log"
	_, err = f.st.TaskLogAppend(f.ctx, &store.TaskLogAppendParams{Key: other, Data: []byte("try 2\n"), Now: f.at(time.Hour)})
	must(t, err, "append to try 2")
	n, err := f.st.TaskLogPrune(f.ctx, f.at(time.Minute))
	must(t, err, "prune")
	if n != 3 {
		t.Errorf("pruned %d chunks, want try 1's 3", n)
	}
	_, _, err = f.st.TaskLogRead(f.ctx, key, 0, 100)
	wantErr(t, err, core.ErrNotFound, "read a pruned log")
	if data, _, err := f.st.TaskLogRead(f.ctx, other, 0, 100); err != nil || string(data) != "try 2\n" {
		t.Errorf("try 2's log after pruning = %q, %v", data, err)
	}
}
