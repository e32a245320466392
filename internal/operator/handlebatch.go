package operator

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weirflow/weir/internal/core"
)

// HandleBatchKwargs is the next_kwargs a Go batch stream handler's call
// sees: the sequence index of the batch's first event and how many it
// holds (the events, a JSON array of core.StreamEvent, are the resume
// event).
type HandleBatchKwargs struct {
	SequenceIndex int64 `json:"sequence_index"`
	Count         int   `json:"count"`
}

// RegisterStreamBatch adds fn under name as a batch stream handler: a
// streaming operator naming it in handle_function calls it with every
// event committed since its previous call, in order, instead of once per
// event (docs/streaming.md#streaming-operators).
func (r *Registry) RegisterStreamBatch(name string, fn GoFunc) error {
	if err := r.Register(name, fn); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.batches == nil {
		r.batches = map[string]bool{}
	}
	r.batches[name] = true
	return nil
}

// TakesStreamBatches reports whether the function registered under name
// is a batch stream handler (RegisterStreamBatch).
func (r *Registry) TakesStreamBatches(name string) bool {
	if r == nil {
		return false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.batches[name]
}

// batchTaker is a handler that takes the events of a read together.
type batchTaker interface {
	// giveBatch hands the handler consecutive events, in order; an error
	// is the handler's failure, having handled none of them.
	giveBatch(ctx context.Context, evs []core.StreamEvent) error
}

// giveEvents hands h the events of one read, in order: all at once to a
// batch handler, one by one to the others.
func giveEvents(ctx context.Context, h streamHandler, evs []core.StreamEvent) error {
	if len(evs) == 0 {
		return nil
	}
	if b, ok := h.(batchTaker); ok {
		return b.giveBatch(ctx, evs)
	}
	for i := range evs {
		if err := h.give(ctx, &evs[i]); err != nil {
			return err
		}
	}
	return nil
}

// goBatchHandler calls a registered Go batch handler with the events
// committed since its previous call (those of one read), recording the
// whole batch handled when it returns nil; on an error none of the batch
// is recorded, so the retry calls it again from the batch's first event.
type goBatchHandler struct {
	goHandler
}

func (g *goBatchHandler) give(ctx context.Context, ev *core.StreamEvent) error {
	return g.giveBatch(ctx, []core.StreamEvent{*ev})
}

func (g *goBatchHandler) giveBatch(ctx context.Context, evs []core.StreamEvent) error {
	first, last := evs[0].SequenceIndex, evs[len(evs)-1].SequenceIndex
	kw, err := json.Marshal(HandleBatchKwargs{SequenceIndex: first, Count: len(evs)})
	if err != nil {
		return err
	}
	batch, err := json.Marshal(evs)
	if err != nil {
		return err
	}
	tc := g.r.goContext(g.req)
	tc.Resume = &Resume{Method: core.NextMethodStream, Kwargs: kw, Event: batch}
	if _, err := g.r.callGo(ctx, g.req, g.name, g.fn, tc); err != nil {
		return fmt.Errorf("the batch of events %d..%d: %w", first, last, err)
	}
	if _, err := g.src.StreamHandled(ctx, last); err != nil {
		return fmt.Errorf("events %d..%d were handled but could not be recorded (a retry handles them again): %w", first, last, err)
	}
	g.next = last + 1
	return nil
}
