package job_test

import (
	"context"
	"errors"
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

// A batch that fails leaves the walk where it was: the next call looks at
// the same keys again.
func TestWalkKeepsItsPlaceAfterAFailure(t *testing.T) {
	t.Parallel()
	fail := errors.New("database gone")
	var afters []string
	w := &job.Walk{After: "k", Batch: func(_ context.Context, _ time.Time, after string) (int64, string, error) {
		afters = append(afters, after)
		if len(afters) == 2 {
			return 0, "", fail
		}
		return 1, after + "+", nil
	}}
	if _, err := w.Prune(context.Background(), time.Time{}); !errors.Is(err, fail) {
		t.Fatalf("prune = %v, want the batch's error", err)
	}
	if _, err := w.Prune(context.Background(), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if afters[0] != "k" || afters[1] != "k+" || afters[2] != "k+" {
		t.Errorf("batches began at %q, want k, k+, then k+ again after the failure", afters[:3])
	}
}
