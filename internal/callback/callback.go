// Package callback holds the pure rules of callbacks (docs/emission.md#callbacks,
// ADR 0015): which callbacks a state change fires, and the environment a
// callback's command runs with. The service layer and the scheduler write
// what Fire* return in the transaction of the state change; workers run
// them. No I/O.
package callback

import (
	"strconv"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/template"
)

// EventOfTry returns the callback event of a try's change to state, and
// false for a state that fires none.
func EventOfTry(state core.TIState) (core.CallbackEvent, bool) {
	switch state {
	case core.TIRunning:
		return core.OnExecute, true
	case core.TISuccess:
		return core.OnSuccess, true
	case core.TIFailed:
		return core.OnFailure, true
	case core.TIUpForRetry:
		return core.OnRetry, true
	case core.TISkipped:
		return core.OnSkipped, true
	default:
		return "", false
	}
}

// EventOfRun returns the callback event of a run's end, and false for a
// state that fires none.
func EventOfRun(state core.DagRunState) (core.CallbackEvent, bool) {
	switch state {
	case core.RunSuccess:
		return core.OnSuccess, true
	case core.RunFailed:
		return core.OnFailure, true
	default:
		return "", false
	}
}

// FireForTry returns the callbacks task declares for ti's change to state
// (nil when it declares none).
func FireForTry(task *core.Task, ti *core.TaskInstance, state core.TIState) []core.Callback {
	ev, ok := EventOfTry(state)
	if !ok || task == nil {
		return nil
	}
	specs := task.Callbacks.For(ev)
	out := make([]core.Callback, 0, len(specs))
	for i, spec := range specs {
		out = append(out, core.Callback{Level: core.CallbackTask, Event: ev, DagID: ti.DagID, RunID: ti.RunID,
			DagRunID: ti.DagRunID, TaskID: ti.TaskID, MapIndex: ti.MapIndex, TryNumber: ti.TryNumber,
			SpecIndex: i, Spec: spec, Outcome: string(state)})
	}
	return out
}

// Declared says whether dag declares a callback, of its runs or of a
// task: whether its runs can fire any.
func Declared(dag *core.DAG) bool {
	if dag.Callbacks.Any() {
		return true
	}
	for i := range dag.Tasks {
		if dag.Tasks[i].Callbacks.Any() {
			return true
		}
	}
	return false
}

// FireForRun returns the callbacks dag declares for run's end in state
// (nil when it declares none, or run is a `weir tasks test`'s). They carry
// no task.
func FireForRun(dag *core.DAG, run *core.DagRun, state core.DagRunState) []core.Callback {
	ev, ok := EventOfRun(state)
	if !ok || dag == nil || run.TestsOneTask() {
		return nil
	}
	specs := dag.Callbacks.For(ev)
	out := make([]core.Callback, 0, len(specs))
	for i, spec := range specs {
		out = append(out, core.Callback{Level: core.CallbackDag, Event: ev, DagID: run.DagID, RunID: run.RunID,
			DagRunID: run.ID, MapIndex: core.NoMapIndex, SpecIndex: i, Spec: spec, Outcome: string(state)})
	}
	return out
}

// Env is the environment a callback's command gets besides the worker's:
// which callback it is (WEIR_CALLBACK_ID, to make a repeat harmless:
// callbacks run at least once), what fired it, and whose it is.
func Env(cb *core.Callback) []string {
	env := []string{
		"WEIR_CALLBACK_ID=" + strconv.FormatInt(cb.ID, 10),
		"WEIR_CALLBACK_EVENT=" + string(cb.Event),
		"WEIR_CALLBACK_OUTCOME=" + cb.Outcome,
		"WEIR_CALLBACK_ATTEMPT=" + strconv.Itoa(cb.Attempts),
		"WEIR_DAG_ID=" + cb.DagID,
		"WEIR_RUN_ID=" + cb.RunID,
	}
	if cb.Level == core.CallbackTask {
		env = append(env, "WEIR_TASK_ID="+cb.TaskID, "WEIR_MAP_INDEX="+strconv.Itoa(cb.MapIndex),
			"WEIR_TRY_NUMBER="+strconv.Itoa(cb.TryNumber))
	}
	return env
}

// Context is the .callback of a callback's templates: which callback it is
// and what fired it.
func Context(cb *core.Callback) map[string]any {
	return map[string]any{
		"id": cb.ID, "level": string(cb.Level), "event": string(cb.Event), "outcome": cb.Outcome,
		"attempt": cb.Attempts, "dag_id": cb.DagID, "run_id": cb.RunID, "task_id": cb.TaskID,
		"map_index": cb.MapIndex, "try_number": cb.TryNumber,
	}
}

// TemplateContext is what a callback's templates (its command, an
// asset_event notifier's partition key and extra) are rendered over: the
// run's context (template.Context, with no try) and .callback (Context).
// DAG validation checks the templates' names against it.
func TemplateContext(run *core.DagRun, params map[string]any, cb *core.Callback) map[string]any {
	tctx := template.Context(run, nil, params)
	tctx["callback"] = Context(cb)
	tctx["task_id"], tctx["map_index"] = cb.TaskID, cb.MapIndex
	return tctx
}
