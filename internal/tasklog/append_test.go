package tasklog

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// AppendAt keeps each byte of a try's log once: a repeated chunk is
// ignored, a partly stored one adds the rest, a gap is refused naming the
// length, and the log is unchanged by a refusal.
func TestAppendAtIsIdempotent(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	k := Key{DagID: "d", RunID: "r", TaskID: "t", MapIndex: -1, TryNumber: 1}
	for _, step := range []struct {
		offset   int64
		data     string
		wantSize int64
		wantLog  string
		gap      bool
	}{
		{0, "line 1\n", 7, "line 1\n", false},
		{0, "line 1\n", 7, "line 1\n", false},                          // repeated: ignored
		{7, "line 2\n", 14, "line 1\nline 2\n", false},                 // next
		{3, "e 1\nline 2\n", 14, "line 1\nline 2\n", false},            // inside what is stored: ignored
		{7, "line 2\nline 3\n", 21, "line 1\nline 2\nline 3\n", false}, // partly stored: the rest
		{30, "line 5\n", 21, "line 1\nline 2\nline 3\n", true},         // gap: refused
		{21, "", 21, "line 1\nline 2\nline 3\n", false},                // empty chunk at the end
	} {
		size, err := AppendAt(base, k, step.offset, []byte(step.data))
		var gap *GapError
		if step.gap != errors.As(err, &gap) || (!step.gap && err != nil) {
			t.Fatalf("AppendAt(%d, %q) error = %v, want gap %t", step.offset, step.data, err, step.gap)
		}
		if step.gap && (!errors.Is(err, core.ErrConflict) || gap.Size != 21 ||
			!strings.Contains(err.Error(), "starts at byte 30, but the log has 21 bytes: send the log from byte 21")) {
			t.Fatalf("gap error = %v (%+v)", err, gap)
		}
		got, _, rerr := Read(base, k, 0)
		if size != step.wantSize || string(got) != step.wantLog || rerr != nil {
			t.Fatalf("AppendAt(%d, %q): size %d log %q (%v), want %d %q", step.offset, step.data, size, got, rerr, step.wantSize, step.wantLog)
		}
	}
	if _, err := AppendAt(base, k, -1, []byte("x")); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("negative offset: %v", err)
	}
}

// Several api-servers sharing the log folder may receive the same chunk at
// once (a client retrying against another server behind the load
// balancer): each opens the file on its own, and the lock makes every
// byte land once.
func TestAppendAtConcurrentWriters(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	k := Key{DagID: "d", RunID: "r", TaskID: "t", MapIndex: 2, TryNumber: 1}
	var chunks []string
	var want strings.Builder
	for i := range 500 {
		c := fmt.Sprintf("line %d\n", i)
		chunks = append(chunks, c)
		want.WriteString(c)
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var off int64
			for _, c := range chunks {
				// A writer that is behind (another wrote ahead of it) sends
				// from where it is; one ahead waits for none: each knows the
				// offset of its own chunk, as a retrying client does.
				if _, err := AppendAt(base, k, off, []byte(c)); err != nil {
					t.Error(err)
					return
				}
				off += int64(len(c))
			}
		}()
	}
	wg.Wait()
	got, _, err := Read(base, k, 0)
	if err != nil || string(got) != want.String() {
		t.Fatalf("log = %q (%v), want each line once", got, err)
	}
}
