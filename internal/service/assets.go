package service

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/emission"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// CreateAssetEvent records an event of the asset assetID from outside Weir
// (a person or program through the REST API or the admin CLI; docs/requirements.md#e-7)
// with the fields a running task may give (emission.Request; its Asset is
// ignored): consumers scheduled on the asset are queued in the same
// transaction, the entry is audited, the event records the actor as its
// source user, and the scheduler is woken. Needs role op. With an
// idempotency key that already names an event of the asset, that event
// comes back with duplicate true and nothing is created or audited. Errors
// wrap core.ErrNotFound for an unknown asset, core.ErrInvalid or
// core.ErrTooLarge for a bad field (emission.Check) and core.ErrConflict
// for a key that names another asset's event or partition.
func (s *Service) CreateAssetEvent(ctx context.Context, actor core.Actor, assetID int64, r emission.Request) (ev *core.AssetEvent, duplicate bool, err error) {
	c := &change{actor: actor, need: core.RoleOp, action: audit.AssetEventCreate, notify: []string{store.ChannelScheduler}}
	if err := actor.Authorize(c.need, c.action); err != nil {
		return nil, false, err
	}
	if assetID <= 0 {
		return nil, false, fmt.Errorf("asset_id is required (the id shown by GET /api/v2/assets): %w", core.ErrInvalid)
	}
	a, err := s.st.AssetGet(ctx, assetID)
	if err != nil {
		return nil, false, fmt.Errorf("asset_id %d: %w", assetID, err)
	}
	r.Asset, r.Alias = core.AssetRef{Name: a.Name}, ""
	checked, err := emission.Check(r, s.maxExtra)
	if err != nil {
		return nil, false, fmt.Errorf("create an event of asset %q: %w", a.Name, err)
	}
	p := eventParams(checked, s.clock.Now())
	p.AssetID, p.SourceKind, p.SourceUser = a.ID, core.AssetSourceAPI, actor.Name
	ev, duplicate, err = s.recordOnce(ctx, p, func() (*core.AssetEvent, error) {
		var ev *core.AssetEvent
		err := s.do(ctx, c, func(tx store.Store, detail *string) error {
			var err error
			if ev, err = tx.AssetEventInsert(ctx, p); err != nil {
				return err
			}
			c.target, *detail = ev.Name, "event "+strconv.FormatInt(ev.ID, 10)+" "+string(ev.Extra)
			return nil
		})
		return ev, err
	})
	if err != nil {
		return nil, false, fmt.Errorf("create an event of asset %q: %w", a.Name, err)
	}
	return ev, duplicate, nil
}

// MaterializeAsset triggers a run of the one active DAG with a task that
// produces asset assetID (a task with it as outlet), as Airflow's
// materialize: the whole DAG runs, manually, now. Needs role op. Errors
// wrap core.ErrNotFound for an unknown asset or one no DAG produces, and
// core.ErrConflict when several DAGs produce it (name the DAG to trigger).
func (s *Service) MaterializeAsset(ctx context.Context, actor core.Actor, assetID int64) (*core.DagRun, error) {
	if err := actor.Authorize(core.RoleOp, audit.DagRunTrigger); err != nil {
		return nil, err
	}
	a, err := s.st.AssetGet(ctx, assetID)
	if err != nil {
		return nil, fmt.Errorf("asset_id %d: %w", assetID, err)
	}
	switch dags := a.ProducingDags(); len(dags) {
	case 0:
		return nil, fmt.Errorf("materialize asset %q: no active DAG has a task with it as outlet: %w", a.Name, core.ErrNotFound)
	case 1:
		return s.TriggerRun(ctx, actor, runs.TriggerParams{DagID: dags[0]})
	default:
		return nil, fmt.Errorf("materialize asset %q: DAGs %s all produce it; trigger the one you mean: %w",
			a.Name, strings.Join(dags, ", "), core.ErrConflict)
	}
}

// ClearQueuedEvents removes the asset events queued for p's DAG and/or
// asset that no run consumed yet (those queued before p.Before when set),
// so that they trigger nothing, and returns how many queue entries went.
// Needs role op; audited. Errors wrap core.ErrNotFound when nothing was
// queued (as Airflow's DELETE .../queuedEvents) and core.ErrInvalid for a
// p that names neither.
func (s *Service) ClearQueuedEvents(ctx context.Context, actor core.Actor, p store.AssetQueueParams) (int, error) {
	target := "dag " + p.DagID
	switch {
	case p.DagID == "":
		target = "asset " + strconv.FormatInt(p.AssetID, 10)
	case p.AssetID != 0:
		target += ", asset " + strconv.FormatInt(p.AssetID, 10)
	}
	var n int
	c := &change{actor: actor, need: core.RoleOp, action: audit.AssetQueueClear, target: target}
	err := s.do(ctx, c, func(tx store.Store, detail *string) error {
		var err error
		if n, err = tx.AssetQueueClear(ctx, &p); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("no asset events are queued for %s: %w", target, core.ErrNotFound)
		}
		*detail = fmt.Sprintf("%d queued", n)
		return nil
	})
	return n, err
}
