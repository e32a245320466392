package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/template"
)

// maxTimeoutsPerPass bounds the deferred tries one pass fails for their
// timeout; the rest wait for the next pass.
const maxTimeoutsPerPass = 500

// timeOutDeferred fails the deferred tries whose timeout passed
// (service.TimeoutDeferred): each resumes into a failure naming its
// trigger and timeout, and retries follow as for any failure. It looks
// once per poll interval (the pass's next wake-up is set by then), so a
// timeout is noticed within the poll interval. Not on every pass: passes
// run back to back while triggers fire, and the look reads every deferred
// try on SQLite (12 % of a standalone's CPU with 10,000 waiting, see
// docs/benchmarks.md).
func (s *Scheduler) timeOutDeferred(ctx context.Context, now time.Time, res *passResult) error {
	if !s.due(&s.timeouts, now, s.Config.PollInterval, res) {
		return nil
	}
	n, err := s.Service.TimeoutDeferred(ctx, maxTimeoutsPerPass)
	if err != nil {
		return fmt.Errorf("time out deferred task instances: %w", err)
	}
	if n > 0 {
		s.Logger.Info("deferred task instances timed out", "count", n)
	}
	if n >= maxTimeoutsPerPass { // more may be due: look again next pass
		s.mu.Lock()
		s.timeouts = periodic{}
		s.mu.Unlock()
		res.again = true
	}
	return nil
}

// firstState is the state a new try of task begins in: none for a task
// that starts from a trigger (the next pass defers it), scheduled
// otherwise.
func firstState(task *core.Task) core.TIState {
	if task != nil && task.StartTrigger != nil {
		return core.TINone
	}
	return core.TIScheduled
}

// startFromTrigger defers ti on its task's start trigger, with the
// trigger's string kwargs rendered as templates for ti's run (no XCom: no
// upstream value is pulled before the try runs on a worker).
func (s *Scheduler) startFromTrigger(ctx context.Context, run *core.DagRun, g *graph, ti *core.TaskInstance) error {
	task := g.tasks[ti.TaskID]
	d := *task.StartTrigger
	if len(d.Trigger.Kwargs) > 0 {
		var kwargs map[string]any
		if err := json.Unmarshal(d.Trigger.Kwargs, &kwargs); err != nil {
			return fmt.Errorf("start %s from its trigger: kwargs: %w", runs.Describe(ti), err)
		}
		rendered, err := template.RenderArgs(kwargs, template.Context(run, ti, g.spec.Params), template.Funcs{Syntax: g.spec.TemplateSyntax})
		if err != nil {
			return s.failStart(ctx, ti, fmt.Errorf("render the trigger's kwargs: %w", err))
		}
		if d.Trigger.Kwargs, err = json.Marshal(rendered); err != nil {
			return fmt.Errorf("start %s from its trigger: %w", runs.Describe(ti), err)
		}
	}
	start := s.Service.StartFromTrigger
	switch {
	case task.HandlesStream():
		start = s.Service.StartHandler // a streaming operator handles its trigger's events as they come
	case g.producers[ti.TaskID]:
		start = s.Service.StartProducer // its trigger's run fills the stream its iterators expand over
	}
	if _, err := start(ctx, ti, d); err != nil {
		if benign(err) {
			return err
		}
		return s.failStart(ctx, ti, err)
	}
	return nil
}

// failStart fails an instance whose trigger cannot start (its kwargs do
// not render, or the rendered kwargs are invalid) through a worker step,
// so that the reason is in the try's log (service.FailStart).
func (s *Scheduler) failStart(ctx context.Context, ti *core.TaskInstance, cause error) error {
	s.Logger.Warn("cannot start task from its trigger; failing it", "dag_id", ti.DagID, "run_id", ti.RunID,
		"task_id", ti.TaskID, "map_index", ti.MapIndex, "err", cause)
	return s.Service.FailStart(ctx, ti, cause)
}

// failNone fails a none-state instance that can never run.
func (s *Scheduler) failNone(ctx context.Context, ti *core.TaskInstance) error {
	_, err := s.Store.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{
		IDs: []string{ti.ID}, From: []core.TIState{core.TINone}, To: core.TIFailed, Now: s.Clock.Now(),
	})
	if err != nil {
		return fmt.Errorf("fail %s: %w", runs.Describe(ti), err)
	}
	return nil
}
