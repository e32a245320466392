package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// AssetLinks returns how active DAGs use the assets, in one query.
func (s *Store) AssetLinks(ctx context.Context, assetIDs []int64) ([]store.AssetLink, error) {
	if len(assetIDs) == 0 {
		return nil, nil
	}
	var b builder
	rows, err := s.reader().QueryContext(ctx, fmt.Sprintf(qAssetLinks, ints(&b, assetIDs)), b.args...)
	if err != nil {
		return nil, s.wrap(err, "asset links")
	}
	out, err := collect(rows, func(r *sql.Rows) (store.AssetLink, error) {
		var (
			l                store.AssetLink
			created, updated int64
		)
		err := r.Scan(&l.AssetID, &l.Kind, &l.DagID, &l.TaskID, &created, &updated)
		l.CreatedAt, l.UpdatedAt = fromMicros(created), fromMicros(updated)
		return l, err
	})
	return out, s.wrap(err, "asset links")
}

// fillUses reads the users of assets — the DAGs scheduled on them, the
// tasks producing and consuming them, the aliases they were added to and
// their newest events — in three queries for the whole page.
func (s *Store) fillUses(ctx context.Context, assets []core.AssetModel) error {
	at := make(map[int64]*core.AssetModel, len(assets))
	ids := make([]int64, len(assets))
	for i := range assets {
		a := &assets[i]
		a.ScheduledDags, a.Producing, a.Consuming, a.Aliases = []core.DagRef{}, []core.TaskRef{}, []core.TaskRef{}, []core.AliasRef{}
		at[a.ID], ids[i] = a, a.ID
	}
	if len(assets) == 0 {
		return nil
	}
	links, err := s.AssetLinks(ctx, ids)
	if err != nil {
		return err
	}
	for _, l := range links {
		a := at[l.AssetID]
		switch l.Kind {
		case store.AssetLinkScheduled:
			a.ScheduledDags = append(a.ScheduledDags, core.DagRef{DagID: l.DagID, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt})
		case store.AssetLinkProducer:
			a.Producing = append(a.Producing, core.TaskRef{DagID: l.DagID, TaskID: l.TaskID, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt})
		case store.AssetLinkReader:
			a.Consuming = append(a.Consuming, core.TaskRef{DagID: l.DagID, TaskID: l.TaskID, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt})
		}
	}
	type aliased struct {
		assetID int64
		alias   core.AliasRef
	}
	var b builder
	rows, err := s.reader().QueryContext(ctx, fmt.Sprintf(qAssetAliasesOf, ints(&b, ids)), b.args...)
	if err != nil {
		return s.wrap(err, "aliases of assets")
	}
	aliases, err := collect(rows, func(r *sql.Rows) (aliased, error) {
		x := aliased{alias: core.AliasRef{Group: core.DefaultAssetGroup}}
		return x, r.Scan(&x.assetID, &x.alias.ID, &x.alias.Name)
	})
	if err != nil {
		return s.wrap(err, "aliases of assets")
	}
	for _, x := range aliases {
		at[x.assetID].Aliases = append(at[x.assetID].Aliases, x.alias)
	}
	last, err := s.lastEvents(ctx, ids)
	for id, ev := range last {
		at[id].LastEvent = &ev
	}
	return err
}

// AssetEventRuns returns the runs each of the events created, in one query.
func (s *Store) AssetEventRuns(ctx context.Context, eventIDs []int64) ([]store.EventRun, error) {
	if len(eventIDs) == 0 {
		return nil, nil
	}
	var b builder
	rows, err := s.reader().QueryContext(ctx, fmt.Sprintf(qAssetEventRuns, ints(&b, eventIDs)), b.args...)
	if err != nil {
		return nil, s.wrap(err, "runs of asset events")
	}
	out, err := collect(rows, func(r *sql.Rows) (store.EventRun, error) {
		var (
			x   store.EventRun
			row runRow
		)
		if err := r.Scan(append([]any{&x.EventID}, row.dest()...)...); err != nil {
			return x, err
		}
		x.Run = *row.made()
		return x, nil
	})
	return out, s.wrap(err, "runs of asset events")
}
