package service

import (
	"context"
	"fmt"
	"strconv"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/emission"
	"github.com/weirflow/weir/internal/store"
)

// DefaultMaxCallbackChainDepth is [callbacks] max_chain_depth's default.
const DefaultMaxCallbackChainDepth = 3

// CallbackIdempotencyKey is the idempotency key of the event callback id's
// asset_event notifier emits: every attempt of the callback names one
// event, so a callback run again after its worker died emits nothing new.
func CallbackIdempotencyKey(id int64) string { return "callback/" + strconv.FormatInt(id, 10) }

// EmitFromCallback records the event the asset_event notifier of callback
// cb (running in attempt) emits, with partition key and extra rendered by
// the worker (docs/emission.md#notifiers): of the asset the notifier names,
// with source kind callback and the callback's provenance — a task
// callback's try, a DAG-level callback's DAG and run only, no task. Its
// idempotency key is CallbackIdempotencyKey(cb.ID), so a repeat gets the
// first receipt.
//
// The feedback-loop guard: the event's callback depth is 1 + the deepest
// of the events that created cb's run; beyond MaxCallbackChainDepth the
// emission is refused (core.ErrConflict, "feedback loop: ...") and nothing
// is created. Other errors, with nothing created: core.ErrConflict when cb
// is not running in attempt, core.ErrInvalid when it is not an asset_event
// notifier or the fields are bad (emission.Check), core.ErrNotFound when
// its asset is gone or inactive.
func (s *Service) EmitFromCallback(ctx context.Context, id int64, attempt int, r emission.Request) (*core.AssetEventReceipt, error) {
	rec, err := s.emitFromCallback(ctx, id, attempt, r)
	if err != nil {
		return nil, fmt.Errorf("emit the event of callback %d: %w", id, err)
	}
	return rec, nil
}

func (s *Service) emitFromCallback(ctx context.Context, id int64, attempt int, r emission.Request) (*core.AssetEventReceipt, error) {
	cb, err := s.st.CallbackGet(ctx, id)
	if err != nil {
		return nil, err
	}
	if cb.State != core.CallbackRunning || cb.Attempts != attempt {
		return nil, fmt.Errorf("its attempt %d is not running (it is %s in attempt %d): %w", attempt, cb.State, cb.Attempts, core.ErrConflict)
	}
	if cb.Spec.Notifier != core.NotifierAssetEvent {
		return nil, fmt.Errorf("it is not an asset_event notifier: %w", core.ErrInvalid)
	}
	r.Asset, r.Alias, r.IdempotencyKey = core.AssetRef{Name: cb.Spec.Asset}, "", CallbackIdempotencyKey(cb.ID)
	c, err := emission.Check(r, s.maxExtra)
	if err != nil {
		return nil, err
	}
	depth, chain, err := s.callbackDepth(ctx, cb)
	if err != nil {
		return nil, err
	}
	if depth > s.maxChainDepth {
		return nil, fmt.Errorf("feedback loop: this event of asset %q would be callback depth %d, beyond [callbacks] max_chain_depth %d "+
			"(callback events that led here: %s); no event was made: %w", cb.Spec.Asset, depth, s.maxChainDepth, chain, core.ErrConflict)
	}
	a, err := s.activeAsset(ctx, r.Asset)
	if err != nil {
		return nil, err
	}
	p := eventParams(c, s.clock.Now())
	p.AssetID, p.SourceKind, p.SourceDagID, p.SourceRunID = a.ID, core.AssetSourceCallback, cb.DagID, cb.RunID
	if cb.Level == core.CallbackTask {
		p.SourceTaskID, p.SourceMapIndex, p.SourceTryNumber = cb.TaskID, cb.MapIndex, cb.TryNumber
	}
	p.SourceCallbackID, p.CallbackDepth = cb.ID, depth
	return s.emitOnce(ctx, p)
}

// callbackDepth returns the callback depth of an event cb emits (1 + the
// deepest of the events that created its run, read in the database) and
// the chain that leads to it, for the loop guard's message.
func (s *Service) callbackDepth(ctx context.Context, cb *core.Callback) (int, string, error) {
	deepest, err := s.st.AssetEventList(ctx, &store.AssetEventListParams{ConsumedByRunID: cb.DagRunID,
		Page: store.Page{Limit: 1, OrderBy: "-callback_depth"}})
	if err != nil {
		return 0, "", fmt.Errorf("read the events that created dag run %s/%s: %w", cb.DagID, cb.RunID, err)
	}
	chain := fmt.Sprintf("callback %d of %s/%s", cb.ID, cb.DagID, cb.RunID)
	if len(deepest) == 0 || deepest[0].CallbackDepth == 0 {
		return 1, chain, nil
	}
	ev := deepest[0]
	chain = fmt.Sprintf("event %d of asset %q (depth %d, from callback %d of %s/%s) started %s/%s; %s",
		ev.ID, ev.Name, ev.CallbackDepth, ev.SourceCallbackID, ev.SourceDagID, ev.SourceRunID, cb.DagID, cb.RunID, chain)
	return ev.CallbackDepth + 1, chain, nil
}
