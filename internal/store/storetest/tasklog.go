package storetest

import (
	"errors"
	"slices"
	"strings"
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
	res, err := f.st.TaskLogPrune(f.ctx, &store.TaskLogPruneParams{Before: f.at(time.Minute), Limit: 10})
	must(t, err, "prune")
	if res.Chunks != 3 || res.Next != "" {
		t.Errorf("pruned %d chunks, walk at %q; want try 1's 3, and the end reached", res.Chunks, res.Next)
	}
	_, _, err = f.st.TaskLogRead(f.ctx, key, 0, 100)
	wantErr(t, err, core.ErrNotFound, "read a pruned log")
	if data, _, err := f.st.TaskLogRead(f.ctx, other, 0, 100); err != nil || string(data) != "try 2\n" {
		t.Errorf("try 2's log after pruning = %q, %v", data, err)
	}
}

// testTaskLogDeferredTail: a try's whole log, appended in its end's
// transaction with Deferred, stores what of it lies past the log's end
// (nothing on a log as long, the rest on a shorter one, all of it on none,
// the rest after an append of the log's start that commits while it waits)
// and returns its own end; a deferred chunk not at byte 0 is refused and
// changes nothing.
func testTaskLogDeferredTail(t *testing.T, f *fixture) {
	deferred := func(key string, offset int64, data string) (int64, error) {
		var next int64
		err := f.st.WithTx(f.ctx, func(tx store.Store) error {
			var err error
			next, err = tx.TaskLogAppend(f.ctx, &store.TaskLogAppendParams{Key: key, Offset: offset, Data: []byte(data),
				Now: f.at(0), Deferred: true})
			return err
		})
		return next, err
	}
	log := func(key string) string {
		t.Helper()
		data, _, err := f.st.TaskLogRead(f.ctx, key, 0, 100)
		if errors.Is(err, core.ErrNotFound) {
			return ""
		}
		must(t, err, "read")
		return string(data)
	}
	const whole = "hello world\n"
	for _, c := range []struct {
		name, stored string
		want         string
	}{
		{"none stored", "", whole},
		{"a shorter log stored (an answer lost)", "hello ", whole},
		{"the same log stored (the end sent again)", whole, whole},
		{"a longer log stored", whole + "more\n", whole + "more\n"},
	} {
		key := "dag_id=etl/run_id=deferred/task_id=" + strings.ReplaceAll(c.name, " ", "_") + "/attempt=1.log"
		if c.stored != "" {
			_, err := f.st.TaskLogAppend(f.ctx, &store.TaskLogAppendParams{Key: key, Data: []byte(c.stored), Now: f.at(0)})
			must(t, err, "append")
		}
		next, err := deferred(key, 0, whole)
		must(t, err, c.name)
		if next != int64(len(whole)) {
			t.Errorf("%s: next %d, want the chunk's end %d", c.name, next, len(whole))
		}
		if got := log(key); got != c.want {
			t.Errorf("%s: log %q, want %q", c.name, got, c.want)
		}
	}
	// An append of the log's start not yet committed as the deferred
	// chunk goes (a worker's shipping of the running log whose answer was
	// lost) takes byte 0 first: the rest is still appended.
	const raced = "dag_id=etl/run_id=deferred/task_id=raced/attempt=1.log"
	inserted, commit, shipped := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		shipped <- f.st.WithTx(f.ctx, func(tx store.Store) error {
			_, err := tx.TaskLogAppend(f.ctx, &store.TaskLogAppendParams{Key: raced, Data: []byte("hello "), Now: f.at(0)})
			close(inserted)
			<-commit
			return err
		})
	}()
	<-inserted
	ended := make(chan error, 1)
	go func() { _, err := deferred(raced, 0, whole); ended <- err }()
	time.Sleep(100 * time.Millisecond) // the deferred chunk waits for the shipped one
	close(commit)
	must(t, <-shipped, "ship the log's start")
	must(t, <-ended, "the end with the whole log")
	if got := log(raced); got != whole {
		t.Errorf("log after an append raced the end's: %q, want %q", got, whole)
	}

	const key = "dag_id=etl/run_id=deferred/task_id=offset/attempt=1.log"
	_, err := deferred(key, 6, "world\n")
	wantErr(t, err, core.ErrInvalid, "a deferred chunk past byte 0")
	if got := log(key); got != "" {
		t.Errorf("a refused deferred chunk stored %q", got)
	}
}

// testTaskLogPruneWalk: the prune walks the logs in key order a batch at
// a time: each batch looks at Limit logs after the last key and says where
// it stopped ("" at the end); it deletes, whole, exactly the logs last
// written before the cut-off, a log with an old and a new chunk among the
// kept.
func testTaskLogPruneWalk(t *testing.T, f *fixture) {
	write := func(key string, at ...time.Duration) {
		var offset int64
		for _, a := range at {
			n, err := f.st.TaskLogAppend(f.ctx, &store.TaskLogAppendParams{Key: key, Offset: offset, Data: []byte("line\n"), Now: f.at(a)})
			must(t, err, "append to "+key)
			offset = n
		}
	}
	write("a-old", 0, time.Second)
	write("b-new", time.Hour)
	write("c-old", 0)
	write("d-mixed", 0, time.Hour)
	write("e-old", time.Second, 2*time.Second, 3*time.Second)
	var (
		chunks int64
		walked []string
		after  string
	)
	for range 10 {
		res, err := f.st.TaskLogPrune(f.ctx, &store.TaskLogPruneParams{Before: f.at(time.Minute), After: after, Limit: 2})
		must(t, err, "prune a batch")
		chunks += res.Chunks
		walked = append(walked, res.Next)
		if after = res.Next; after == "" {
			break
		}
	}
	if want := []string{"b-new", "d-mixed", ""}; !slices.Equal(walked, want) {
		t.Errorf("the walk stopped at %q, want %q", walked, want)
	}
	if chunks != 6 {
		t.Errorf("pruned %d chunks, want the old logs' 6", chunks)
	}
	for key, kept := range map[string]bool{"a-old": false, "b-new": true, "c-old": false, "d-mixed": true, "e-old": false} {
		data, _, err := f.st.TaskLogRead(f.ctx, key, 0, 100)
		switch {
		case kept && (err != nil || len(data) == 0):
			t.Errorf("%s: read %q, %v; want it kept", key, data, err)
		case !kept && !errors.Is(err, core.ErrNotFound):
			t.Errorf("%s: read %q, %v; want it pruned", key, data, err)
		}
	}
	if size, err := f.st.TaskLogSize(f.ctx, "d-mixed"); err != nil || size != 10 {
		t.Errorf("the mixed log's size = %d, %v; want both its chunks (10 bytes)", size, err)
	}
	_, err := f.st.TaskLogPrune(f.ctx, &store.TaskLogPruneParams{Before: f.at(2 * time.Hour), Limit: 0})
	wantErr(t, err, core.ErrInvalid, "a batch of no logs")
	if size, err := f.st.TaskLogSize(f.ctx, "b-new"); err != nil || size == 0 {
		t.Errorf("after a refused batch, b-new's size = %d, %v; want it kept", size, err)
	}
}

// testTaskLogPruneKeepsLiveTries: a try that has not ended keeps its log
// however long it has been quiet (a step silent for longer than the
// retention); once it ends, the log goes as any other.
func testTaskLogPruneKeepsLiveTries(t *testing.T, f *fixture) {
	quiet := newTI("quiet", core.TIRunning)
	f.run("prune", "r1", quiet)
	const key = "dag_id=prune/run_id=r1/task_id=quiet/attempt=1.log"
	must(t, f.st.TaskLogRecord(f.ctx, &store.TaskLog{Key: key, DagID: "prune", RunID: "r1", TaskID: "quiet",
		MapIndex: core.NoMapIndex, TryNumber: 1, Kind: store.TaskLogDatabase, CreatedAt: f.now}), "record")
	_, err := f.st.TaskLogAppend(f.ctx, &store.TaskLogAppendParams{Key: key, Data: []byte("first line: context\n"), Now: f.now})
	must(t, err, "append")
	prune := func() int64 {
		t.Helper()
		res, err := f.st.TaskLogPrune(f.ctx, &store.TaskLogPruneParams{Before: f.at(time.Hour), Limit: 10})
		must(t, err, "prune")
		return res.Chunks
	}
	if n := prune(); n != 0 {
		t.Fatalf("pruned %d chunks of a running try's quiet log, want none", n)
	}
	_, err = f.st.TaskInstanceSetState(f.ctx, &store.TaskInstanceSetStateParams{IDs: []string{quiet.ID}, To: core.TISuccess, Now: f.at(time.Minute)})
	must(t, err, "end the try")
	if n := prune(); n != 1 {
		t.Errorf("pruned %d chunks of the ended try's log, want its 1", n)
	}
}
