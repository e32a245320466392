package execapi

import (
	"context"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// TryTracer records the lives of tries as traces from the times the
// database recorded (internal/tracing; docs/tracing.md).
type TryTracer interface {
	// TryFinished records a try that ended in state at end.
	TryFinished(ti *core.TaskInstance, runCreated time.Time, state core.TIState, end time.Time, nextRetry *time.Time)
	// TryDeferred records a run of a try that deferred at `at` on a
	// trigger of type trigger.
	TryDeferred(ti *core.TaskInstance, trigger string, at time.Time)
}

// traceFinished hands a try its worker reported finished (ti as it was
// before the report) to the tracer: with its run's creation, which a
// first try's span starts from (read only when tracing is on).
func (s *server) traceFinished(ctx context.Context, ti *core.TaskInstance, state core.TIState, nextRetry *time.Time) {
	end := s.clock.Now()
	var created time.Time
	if ti.TryNumber <= 1 {
		if run, err := s.st.DagRunGet(ctx, ti.DagID, ti.RunID); err == nil {
			created = run.QueuedAt
		}
	}
	s.traces.TryFinished(ti, created, state, end, nextRetry)
}
