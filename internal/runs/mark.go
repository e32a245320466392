package runs

import (
	"fmt"

	"github.com/weirflow/weir/internal/core"
)

// RunMarkable reports whether an operator may set a whole run to state by
// hand (success or failed); the error wraps core.ErrInvalid and names the
// allowed states.
func RunMarkable(state core.DagRunState) error {
	if state == core.RunSuccess || state == core.RunFailed {
		return nil
	}
	return fmt.Errorf("state %q cannot be set on a run by hand; allowed: success, failed: %w", state, core.ErrInvalid)
}

// RunMarks returns what marking a run to state does to its task instances,
// as the ids to move to each new state, Airflow's rule: marking a run
// success marks every instance success except those already success,
// skipped or removed (the task left the DAG); marking it failed marks the running instances failed and the
// ones not finished yet (none, scheduled, queued, up_for_retry, deferred,
// restarting) skipped, and leaves the finished ones as they are. Errors
// wrap core.ErrInvalid (RunMarkable).
func RunMarks(tis []core.TaskInstance, state core.DagRunState) (map[core.TIState][]string, error) {
	if err := RunMarkable(state); err != nil {
		return nil, err
	}
	out := map[core.TIState][]string{}
	for _, ti := range tis {
		to := runMark(ti.State, state)
		if to != ti.State {
			out[to] = append(out[to], ti.ID)
		}
	}
	return out, nil
}

// runMark is the state an instance in from takes when its run is marked
// run (from itself when it keeps its state).
func runMark(from core.TIState, run core.DagRunState) core.TIState {
	if run == core.RunSuccess {
		if from == core.TISkipped || from == core.TIRemoved {
			return from
		}
		return core.TISuccess
	}
	switch {
	case from == core.TIRunning:
		return core.TIFailed
	case from.Finished():
		return from
	default:
		return core.TISkipped
	}
}

// Marked returns the instances a mark to state changes, in their order:
// those not in state already (Airflow's set_state alters no other). It is
// the one rule for what a mark selects, carried out or only shown (dry
// run).
func Marked(tis []core.TaskInstance, state core.TIState) []core.TaskInstance {
	out := []core.TaskInstance{}
	for _, ti := range tis {
		if ti.State != state {
			out = append(out, ti)
		}
	}
	return out
}
