package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/emission"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// EmitFromTry records an asset event that the running try ti emits
// (docs/requirements.md#e-1 to #e-4, docs/emission.md): for one of its task's concrete outlets, or
// for any active asset through one of its alias outlets (the alias then
// resolves to the asset, in the event's transaction). The event commits
// now, is queued for its consumers, and stays whatever the try does later;
// the try's state does not change. With an idempotency key already used for
// this asset (by any try), the first event's receipt comes back marked
// duplicate and nothing is created.
//
// Errors, with nothing created: core.ErrInvalid for a bad request
// (emission.Check), core.ErrTooLarge for an oversized extra,
// core.ErrForbidden when the try is not running or the asset is not one it
// declares (naming what it declares), core.ErrNotFound for an alias
// emission's unknown or inactive asset, core.ErrConflict when the key names
// another asset's event or another partition.
func (s *Service) EmitFromTry(ctx context.Context, ti *core.TaskInstance, r emission.Request) (*core.AssetEventReceipt, error) {
	rec, err := s.emitFromTry(ctx, ti, r)
	if err != nil {
		return nil, fmt.Errorf("emit an event of asset %s from %s: %w", r.Asset.String(), runs.Describe(ti), err)
	}
	return rec, nil
}

func (s *Service) emitFromTry(ctx context.Context, ti *core.TaskInstance, r emission.Request) (*core.AssetEventReceipt, error) {
	c, err := emission.Check(r, s.maxExtra)
	if err != nil {
		return nil, err
	}
	if ti.State != core.TIRunning {
		return nil, fmt.Errorf("only a running try emits events; this one is %s: %w", ti.State, core.ErrForbidden)
	}
	v, err := s.DagVersion(ctx, ti.DagVersionID)
	if err != nil {
		return nil, err
	}
	task := v.Spec.Task(ti.TaskID)
	if task == nil {
		return nil, fmt.Errorf("task %s is not in dag version %d: %w", ti.TaskID, ti.DagVersionID, core.ErrNotFound)
	}
	target, err := emission.Target(&v.Spec, task, r)
	if err != nil {
		return nil, err
	}
	p := eventParams(c, s.clock.Now())
	p.SourceKind, p.SourceDagID, p.SourceRunID, p.SourceTaskID = core.AssetSourceTask, ti.DagID, ti.RunID, ti.TaskID
	p.SourceMapIndex, p.SourceTryNumber = ti.MapIndex, ti.TryNumber
	if target != nil {
		p.AssetName = target.Name
	} else {
		a, err := s.activeAsset(ctx, r.Asset)
		if err != nil {
			return nil, err
		}
		p.AssetID, p.Aliases = a.ID, []string{r.Alias}
	}
	return s.emitOnce(ctx, p)
}

// emitOnce records an emitted event (recordOnce: a repeated idempotency
// key returns the first event) and returns the receipt. The store's
// insert wakes the scheduler with its commit (one notification for a
// group of concurrent emissions).
func (s *Service) emitOnce(ctx context.Context, p *store.AssetEventParams) (*core.AssetEventReceipt, error) {
	ev, dup, err := s.recordOnce(ctx, p, func() (*core.AssetEvent, error) {
		return s.st.AssetEventInsert(ctx, p)
	})
	if err != nil {
		return nil, err
	}
	return ev.Receipt(dup), nil
}

// eventParams returns the store's parameters for a checked request (the
// caller adds the asset and the source).
func eventParams(c *emission.Checked, now time.Time) *store.AssetEventParams {
	return &store.AssetEventParams{Extra: c.Extra, PartitionKey: c.PartitionKey, PartitionDate: c.Date,
		IdempotencyKey: c.Key(), Now: now}
}

// activeAsset returns the asset ref names (by name or uri) when it exists
// and is active; core.ErrNotFound otherwise.
func (s *Service) activeAsset(ctx context.Context, ref core.AssetRef) (*core.AssetModel, error) {
	var (
		a   *core.AssetModel
		err error
	)
	if ref.Name != "" {
		a, err = s.st.AssetGetByName(ctx, ref.Name)
	} else {
		a, err = s.st.AssetGetByURI(ctx, ref.URI)
	}
	if err == nil && !a.Active {
		err = fmt.Errorf("asset %s is inactive (no active DAG defines it): %w", ref.String(), core.ErrNotFound)
	}
	return a, err
}

// recordOnce records p's event with insert unless p's idempotency key
// already names one (then that event, and duplicate true). It inserts
// first — a key is almost always new (the clients make one up per call) —
// and looks the key up only when the store's unique key refuses the
// insert, which also settles two emissions with one key at once.
func (s *Service) recordOnce(ctx context.Context, p *store.AssetEventParams, insert func() (*core.AssetEvent, error)) (*core.AssetEvent, bool, error) {
	ev, err := insert()
	if errors.Is(err, core.ErrConflict) {
		if ev, err := s.repeated(ctx, p); ev != nil || err != nil {
			return ev, true, err
		}
	}
	return ev, false, err
}

// repeated returns the event of p's asset that p's idempotency key already
// names (nil when none does, or p has no key): a key names one event of its
// asset. The event must be of the same partition (core.ErrConflict
// otherwise); the first event's extra stands.
func (s *Service) repeated(ctx context.Context, p *store.AssetEventParams) (*core.AssetEvent, error) {
	if p.IdempotencyKey == "" {
		return nil, nil
	}
	assetID := p.AssetID
	if assetID == 0 {
		a, err := s.st.AssetGetByName(ctx, p.AssetName)
		if err != nil {
			return nil, err
		}
		assetID = a.ID
	}
	ev, err := s.st.AssetEventGetByIdempotencyKey(ctx, assetID, p.IdempotencyKey)
	switch {
	case errors.Is(err, core.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	case !sameKey(ev.PartitionKey, p.PartitionKey) || !sameTime(ev.PartitionDate, p.PartitionDate):
		return nil, fmt.Errorf("idempotency key %q already names event %d of asset %q in partition %s; a repeated emission must name the same partition and date: %w",
			p.IdempotencyKey, ev.ID, ev.Name, partition(ev.PartitionKey, ev.PartitionDate), core.ErrConflict)
	}
	return ev, nil
}

// partition describes a partition key and date for a message.
func partition(k *string, date *time.Time) string {
	if k == nil {
		return "(none)"
	}
	if date == nil {
		return fmt.Sprintf("%q without a date", *k)
	}
	return fmt.Sprintf("%q dated %s", *k, date.UTC().Format(time.RFC3339Nano))
}

func sameKey(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}
