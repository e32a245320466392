package runs

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/schedule"
)

// DefaultBackfillMaxActiveRuns is a backfill's max_active_runs when none
// is given (Airflow's default).
const DefaultBackfillMaxActiveRuns = 10

// MaxBackfillRuns bounds the logical dates one backfill may cover.
const MaxBackfillRuns = 10000

// BackfillRequest is what a backfill is asked for (Airflow 3's
// BackfillPostBody).
type BackfillRequest struct {
	DagID         string
	From, To      time.Time
	RunBackwards  bool
	DagRunConf    json.RawMessage // a JSON object; nil = {}
	Reprocess     core.ReprocessBehavior
	MaxActiveRuns int // 0 = DefaultBackfillMaxActiveRuns
	DryRun        bool
}

// BackfillAction is what a backfill does at one logical date.
type BackfillAction string

// The backfill actions.
const (
	BackfillCreate BackfillAction = "create" // no run yet: create one
	BackfillClear  BackfillAction = "clear"  // clear the existing run and rerun it as the backfill's
	BackfillSkip   BackfillAction = "skip"   // keep the existing run (Reason says why)
)

// BackfillStep is one logical date of a backfill plan.
type BackfillStep struct {
	Interval schedule.Interval // Start is the logical date
	Existing *core.DagRun      // the date's run, nil when there is none
	Action   BackfillAction
	Reason   string // why a skipped date makes no run (core.BackfillInFlight ...)
}

// CheckBackfillRuns refuses a backfill whose plan runs nothing, as Airflow
// does: no logical date of the range is one to run (before the DAG's
// start_date, past its end_date or now), or every date has a run the
// reprocess behavior keeps. Such a backfill would only hold the DAG's one
// backfill slot. The error wraps core.ErrInvalid and says which.
func CheckBackfillRuns(r *BackfillRequest, steps []BackfillStep) error {
	for i := range steps {
		if steps[i].Action != BackfillSkip {
			return nil
		}
	}
	span := r.From.UTC().Format(time.RFC3339) + " to " + r.To.UTC().Format(time.RFC3339)
	if len(steps) == 0 {
		return fmt.Errorf("no logical date of dag %q from %s is one to run: the range is before its start_date, "+
			"after its end_date or in the future: %w", r.DagID, span, core.ErrInvalid)
	}
	return fmt.Errorf("the %d logical dates of dag %q from %s all have a run reprocess_behavior %s keeps "+
		"(see --dry-run; rerun them with --reprocess-behavior failed or completed): %w", len(steps), r.DagID, span, r.Reprocess, core.ErrInvalid)
}

// CheckBackfill validates r and applies its defaults: the dates in order,
// a known reprocess behavior, max_active_runs at least 1 and the conf a
// JSON object. Errors wrap core.ErrInvalid and name the field.
func CheckBackfill(r *BackfillRequest) error {
	if r.To.Before(r.From) {
		return fmt.Errorf("to_date %s is before from_date %s: %w",
			r.To.UTC().Format(time.RFC3339), r.From.UTC().Format(time.RFC3339), core.ErrInvalid)
	}
	b, err := core.ParseReprocessBehavior(string(r.Reprocess))
	if err != nil {
		return err
	}
	r.Reprocess = b
	switch {
	case r.MaxActiveRuns == 0:
		r.MaxActiveRuns = DefaultBackfillMaxActiveRuns
	case r.MaxActiveRuns < 0:
		return fmt.Errorf("max_active_runs %d: must be at least 1: %w", r.MaxActiveRuns, core.ErrInvalid)
	}
	conf, err := normalizeConf(r.DagRunConf)
	if err != nil {
		return fmt.Errorf("dag_run_conf: %w", err)
	}
	r.DagRunConf = conf
	return nil
}

// PlanBackfill lists what a backfill of spec does at each logical date of
// r's range (schedule.Between) in the order its runs are to start (newest
// first with RunBackwards), given the DAG's existing runs in the range.
// A date with no run gets one; a date whose run is queued or running is
// skipped as in flight; a finished run is cleared and rerun when
// r.Reprocess says so (failed: failed runs; completed: failed and
// successful ones), else skipped as already existing.
func PlanBackfill(spec *core.DAG, r *BackfillRequest, existing []core.DagRun, now time.Time) ([]BackfillStep, error) {
	tt, err := schedule.Of(spec)
	if err != nil {
		return nil, fmt.Errorf("dag %q schedule %q: %w", spec.DagID, spec.Schedule, err)
	}
	if _, none := tt.(schedule.None); none {
		return nil, fmt.Errorf("dag %q has no schedule, so it has no logical dates to backfill; trigger runs instead: %w",
			spec.DagID, core.ErrInvalid)
	}
	ivs, err := schedule.Between(tt, r.From, r.To, spec.StartDate, spec.EndDate, now, MaxBackfillRuns)
	if err != nil {
		return nil, fmt.Errorf("dag %q: %w: %w", spec.DagID, err, core.ErrInvalid)
	}
	byDate := make(map[int64]*core.DagRun, len(existing))
	for i := range existing {
		run := &existing[i]
		if run.LogicalDate == nil {
			continue
		}
		// Keep the newest run of a date (the list may hold several).
		if prev, ok := byDate[run.LogicalDate.UnixMicro()]; !ok || run.ID > prev.ID {
			byDate[run.LogicalDate.UnixMicro()] = run
		}
	}
	steps := make([]BackfillStep, len(ivs))
	for i, iv := range ivs {
		st := BackfillStep{Interval: iv, Existing: byDate[iv.Start.UnixMicro()], Action: BackfillCreate}
		if st.Existing != nil {
			st.Action, st.Reason = reprocess(st.Existing.State, r.Reprocess)
		}
		steps[i] = st
	}
	if r.RunBackwards {
		slices.Reverse(steps)
	}
	return steps, nil
}

// reprocess decides what a backfill does with a date's existing run
// (Airflow's _get_dag_run_no_create_reason).
func reprocess(state core.DagRunState, b core.ReprocessBehavior) (BackfillAction, string) {
	switch {
	case !state.Terminal():
		return BackfillSkip, core.BackfillInFlight
	case b == core.ReprocessCompleted, b == core.ReprocessFailed && state == core.RunFailed:
		return BackfillClear, ""
	}
	return BackfillSkip, core.BackfillAlreadyExists
}
