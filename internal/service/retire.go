package service

import (
	"context"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// retireProducer stops the trigger of a stream producer whose try ti,
// deferred on it, has just stopped waiting for another reason than the
// stream's end — its deferral timed out, or it was marked or cleared: the
// trigger is deleted (its stream stays open, for the producer's next try
// to resume with a new trigger), so its triggerer stops running it at its
// next reconcile instead of producing on for a try that no longer
// waits (docs/streaming.md#how-it-runs). A streaming operator's trigger
// (next method __stream__) is left alone: its stream is its consumer's,
// and closing that stream is what stops it.
func retireProducer(ctx context.Context, st store.Store, ti *core.TaskInstance) error {
	if ti.State != core.TIDeferred || ti.TriggerID == nil || ti.NextMethod == core.NextMethodStream {
		return nil
	}
	if _, err := st.TriggerRetireProducer(ctx, *ti.TriggerID); err != nil {
		return fmt.Errorf("stop the trigger of %s: %w", runs.Describe(ti), err)
	}
	return nil
}
