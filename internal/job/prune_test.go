package job_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/job"
)

// A Walk goes on, call after call, from the key the last batch stopped at,
// looks at no more than WalkBatches batches a call, and starts over once a
// batch reached the end.
func TestWalkGoesOnWhereItStopped(t *testing.T) {
	t.Parallel()
	keys := 2*job.WalkBatches + 3 // one batch a key: two whole calls, then the end
	var afters []string
	w := &job.Walk{Batch: func(_ context.Context, _ time.Time, after string) (int64, string, error) {
		afters = append(afters, after)
		n := len(afters) % (keys + 1) // the batch's number in the walk, 0 = the last
		if n == 0 {
			return 1, "", nil
		}
		return 1, string(rune('a' + n%26)), nil
	}}
	calls := []int64{}
	for range 4 {
		n, err := w.Prune(context.Background(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, n)
	}
	// Two calls of WalkBatches each, a short one that reaches the end, and
	// the next starts over.
	if want := []int64{job.WalkBatches, job.WalkBatches, 4, job.WalkBatches}; !slices.Equal(calls, want) {
		t.Errorf("deleted per call %v, want %v", calls, want)
	}
	if afters[0] != "" || afters[job.WalkBatches] == "" || afters[keys+1] != "" {
		t.Errorf("the walk began at %q, the second call at %q, after the end at %q; want \"\", where the first stopped, \"\"",
			afters[0], afters[job.WalkBatches], afters[keys+1])
	}
}
