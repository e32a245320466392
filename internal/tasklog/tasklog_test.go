package tasklog

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

func TestPathLayout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key  Key
		want string
	}{
		{Key{DagID: "d", RunID: "manual__2026-01-01T00:00:00+00:00", TaskID: "t", MapIndex: -1, TryNumber: 1}, "dag_id=d/run_id=manual__2026-01-01T00:00:00+00:00/task_id=t/attempt=1.log"},
		{Key{DagID: "d", RunID: "r", TaskID: "t", MapIndex: 3, TryNumber: 2}, "dag_id=d/run_id=r/task_id=t/map_index=3/attempt=2.log"},
		{Key{DagID: "d", RunID: "../../etc", TaskID: "t", MapIndex: -1, TryNumber: 1}, "dag_id=d/run_id=..%2F..%2Fetc/task_id=t/attempt=1.log"},
		{Key{DagID: "a%2Fb", RunID: "a/b", TaskID: `x\y`, MapIndex: -1, TryNumber: 1}, "dag_id=a%252Fb/run_id=a%2Fb/task_id=x%5Cy/attempt=1.log"},
	} {
		got, err := Path("/base", tc.key)
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join("/base", tc.want); got != want {
			t.Errorf("Path(%+v) = %s, want %s", tc.key, got, want)
		}
	}
	if _, err := Path("/base", Key{DagID: "d", TaskID: "t"}); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("missing run_id: %v", err)
	}
}

func TestAppendReadTail(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	k := Key{DagID: "d", RunID: "r", TaskID: "t", MapIndex: -1, TryNumber: 1}
	if _, _, err := Read(base, k, 0); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("missing log: %v", err)
	}
	if err := Append(base, k, []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	b, off, err := Read(base, k, 0)
	if err != nil || string(b) != "one\n" || off != 4 {
		t.Fatalf("read = %q %d %v", b, off, err)
	}
	if err := Append(base, k, []byte("two\n")); err != nil {
		t.Fatal(err)
	}
	b, off, err = Read(base, k, off)
	if err != nil || string(b) != "two\n" || off != 8 {
		t.Fatalf("tail = %q %d %v", b, off, err)
	}
	b, off2, err := Read(base, k, off)
	if err != nil || len(b) != 0 || off2 != off {
		t.Fatalf("at end = %q %d %v", b, off2, err)
	}
	// A hostile run id stays inside base.
	evil := Key{DagID: "d", RunID: "../../../x", TaskID: "t", MapIndex: -1, TryNumber: 1}
	if err := Append(base, evil, []byte("x")); err != nil {
		t.Fatal(err)
	}
	p, _ := Path(base, evil)
	if !strings.HasPrefix(p, base+string(filepath.Separator)) {
		t.Fatalf("escaped: %s", p)
	}
}

func TestOpenKeepsAppendingToOneFile(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	k := Key{DagID: "d", RunID: "r", TaskID: "t", MapIndex: 2, TryNumber: 1}
	if err := Append(base, k, []byte("first\n")); err != nil {
		t.Fatal(err)
	}
	f, err := Open(base, k)
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []string{"second\n", "third\n"} {
		if _, err := f.WriteString(chunk); err != nil {
			t.Fatal(err)
		}
	}
	// Readers see what was written before the handle is closed.
	data, _, err := Read(base, k, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), "first\nsecond\nthird\n"; got != want {
		t.Errorf("log = %q, want %q", got, want)
	}
}

func TestCallbackPath(t *testing.T) {
	t.Parallel()
	cb := &core.Callback{ID: 42, DagID: "etl", RunID: "manual/1", TaskID: "load"}
	p, err := Path("/logs", CallbackKey(cb, 2))
	if err != nil || p != "/logs/dag_id=etl/run_id=manual%2F1/callback_id=42/attempt=2.log" {
		t.Fatalf("callback log path %q, %v", p, err)
	}
	if _, err := Path("/logs", CallbackKey(cb, 0)); err == nil {
		t.Error("attempt 0 has a path, want an error")
	}
}

// Reading a short log costs what it holds, not a whole MaxReadChunk: `dags
// test` reads every try's log on each wake-up, and a 40-task chain spent
// most of its CPU allocating and clearing 1 MiB buffers.
func TestReadOfAShortLogAllocatesLittle(t *testing.T) {
	base := t.TempDir()
	k := Key{DagID: "d", RunID: "r", TaskID: "t", MapIndex: -1, TryNumber: 1}
	if err := Append(base, k, []byte("one line\n")); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		if b, _, err := Read(base, k, 0); err != nil || string(b) != "one line\n" {
			t.Fatalf("read = %q, %v", b, err)
		}
		if b, _, err := Read(base, k, 9); err != nil || len(b) != 0 {
			t.Fatalf("read at the end = %q, %v", b, err)
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("200 reads of a 9-byte log allocated %d bytes, want under 1 MiB", got)
	}
}
