package runs_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
)

func TestRunMarks(t *testing.T) {
	t.Parallel()
	// One instance per state, its id the state's name.
	var tis []core.TaskInstance
	for _, s := range core.AllTIStates {
		tis = append(tis, core.TaskInstance{ID: s.String(), State: s})
	}
	tests := []struct {
		name  string
		state core.DagRunState
		want  map[core.TIState][]string
	}{
		{"success marks all but success, skipped and removed", core.RunSuccess, map[core.TIState][]string{
			core.TISuccess: {"none", "scheduled", "queued", "running", "failed", "up_for_retry", "upstream_failed", "restarting", "deferred"},
		}},
		{"failed fails the running and skips the unfinished", core.RunFailed, map[core.TIState][]string{
			core.TIFailed:  {"running"},
			core.TISkipped: {"none", "scheduled", "queued", "up_for_retry", "restarting", "deferred"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := runs.RunMarks(tis, tt.state)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("RunMarks(%s) = %v, want %v", tt.state, got, tt.want)
			}
		})
	}
}

func TestRunMarksRefusesOtherStates(t *testing.T) {
	t.Parallel()
	for _, s := range []core.DagRunState{core.RunQueued, core.RunRunning, "done"} {
		if _, err := runs.RunMarks(nil, s); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("RunMarks(%q) error = %v, want ErrInvalid", s, err)
		}
	}
}

// A mark changes the instances not in its state already, in their order.
func TestMarked(t *testing.T) {
	t.Parallel()
	tis := []core.TaskInstance{{ID: "a", State: core.TIRunning}, {ID: "b", State: core.TISuccess},
		{ID: "c", State: core.TINone}, {ID: "d", State: core.TIFailed}}
	for state, want := range map[core.TIState][]string{
		core.TISuccess: {"a", "c", "d"},
		core.TIFailed:  {"a", "b", "c"},
		core.TISkipped: {"a", "b", "c", "d"},
	} {
		var got []string
		for _, ti := range runs.Marked(tis, state) {
			got = append(got, ti.ID)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Marked(%s) = %v, want %v", state, got, want)
		}
	}
	if got := runs.Marked(tis[1:2], core.TISuccess); got == nil || len(got) != 0 {
		t.Errorf("nothing to change: %#v, want an empty list", got)
	}
}
