package service

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

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

// EmitFromCallback records an event callback cb (running in attempt)
// emits, with source kind callback and the callback's provenance — a task
// callback's try, a DAG-level callback's DAG and run only, no task: its
// asset_event notifier's, with partition key and extra rendered by the
// worker (docs/emission.md#notifiers), of the asset the notifier names,
// with idempotency key CallbackIdempotencyKey(cb.ID) so that a repeat gets
// the first receipt; or a Go callback's, of one of its outlets, with the
// idempotency key its worker gave (docs/go-sdk.md#callbacks).
//
// The feedback-loop guard: the event's callback depth is 1 + the deepest
// of the events that created cb's run; beyond MaxCallbackChainDepth the
// emission is refused (core.ErrConflict, "feedback loop: ...") and nothing
// is created. Other errors, with nothing created: core.ErrConflict when cb
// is not running in attempt, core.ErrInvalid when it is neither an
// asset_event notifier nor a Go callback or the fields are bad
// (emission.Check), core.ErrForbidden when a Go callback's asset is not one
// of its outlets, core.ErrNotFound when the asset is gone or inactive.
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
	if r, err = callbackRequest(cb, r); err != nil {
		return nil, err
	}
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
			"(callback events that led here: %s); no event was made: %w", r.Asset.Name, depth, s.maxChainDepth, chain, core.ErrConflict)
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

// callbackRequest returns what callback cb emits for r: an asset_event
// notifier's asset under CallbackIdempotencyKey, or one of a Go callback's
// outlets under the key its worker gave (a Go callback emits only the
// outlets it declares, by name).
func callbackRequest(cb *core.Callback, r emission.Request) (emission.Request, error) {
	r.Alias = ""
	switch {
	case cb.Spec.Notifier == core.NotifierAssetEvent:
		key := CallbackIdempotencyKey(cb.ID)
		r.Asset, r.IdempotencyKey = core.AssetRef{Name: cb.Spec.Asset}, &key
		return r, nil
	case cb.Spec.Function == "":
		return r, fmt.Errorf("it is neither an asset_event notifier nor a Go callback: %w", core.ErrInvalid)
	case r.Asset.Name == "":
		return r, fmt.Errorf("a Go callback names the asset it emits by name (one of its outlets: %s): %w", outletList(cb.Spec.Outlets), core.ErrInvalid)
	case !slices.Contains(cb.Spec.Outlets, r.Asset.Name):
		return r, fmt.Errorf("the Go callback %s may emit only its outlets (%s), not asset %q; add it to the callback's outlets: %w",
			cb.Spec.Function, outletList(cb.Spec.Outlets), r.Asset.Name, core.ErrForbidden)
	case r.IdempotencyKey == nil:
		return r, fmt.Errorf("a Go callback's emission needs an idempotency key: %w", core.ErrInvalid)
	}
	r.Asset.URI = ""
	return r, nil
}

func outletList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return `"` + strings.Join(names, `", "`) + `"`
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
