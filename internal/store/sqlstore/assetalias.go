package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// AssetAliasAssociate records that an alias resolved to an asset: the first
// time, then only the latest time (idempotent).
func (s *Store) AssetAliasAssociate(ctx context.Context, p *store.AssetAliasAssociateParams) error {
	what := fmt.Sprintf("associate alias %q with asset %d", p.Alias, p.AssetID)
	if p.Alias == "" {
		return fmt.Errorf("%s: the alias name must not be empty: %w", what, core.ErrInvalid)
	}
	return s.inTx(ctx, func(tx *Store) error {
		if err := tx.assetExists(ctx, what, p.AssetID); err != nil {
			return err
		}
		if _, err := tx.tx.ExecContext(ctx, qAssetAliasInsert, p.Alias, micros(p.Now)); err != nil {
			return tx.wrap(err, "%s: record alias", what)
		}
		_, err := tx.tx.ExecContext(ctx, qAliasAssociate, p.Alias, p.AssetID, micros(p.Now))
		return tx.wrap(err, "%s", what)
	})
}

// assetExists returns an error wrapping ErrNotFound when no asset has id.
func (s *Store) assetExists(ctx context.Context, what string, id int64) error {
	var n int
	if err := s.reader().QueryRowContext(ctx, qAliasAssetExists, id).Scan(&n); err != nil {
		return s.wrap(err, "%s: find asset", what)
	}
	if n == 0 {
		return fmt.Errorf("%s: no asset has id %d: %w", what, id, core.ErrNotFound)
	}
	return nil
}

// AssetAliasResolve returns the assets an alias is associated with.
func (s *Store) AssetAliasResolve(ctx context.Context, alias string) ([]core.AssetModel, error) {
	what := fmt.Sprintf("resolve alias %q", alias)
	rows, err := s.reader().QueryContext(ctx, qAliasResolve, alias)
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	out, err := collect(rows, func(r *sql.Rows) (core.AssetModel, error) {
		a, err := scanAsset(r)
		if err != nil {
			return core.AssetModel{}, err
		}
		return *a, nil
	})
	return out, s.wrap(err, "%s", what)
}

// AssetAliasList returns a page of the recorded aliases (by name unless
// p.OrderBy says otherwise) with the assets each resolves to.
func (s *Store) AssetAliasList(ctx context.Context, p *store.AssetAliasListParams) ([]store.AssetAlias, error) {
	order, err := assetAliasOrder.clause(p.Page)
	if err != nil {
		return nil, fmt.Errorf("list asset aliases: %w", err)
	}
	var b builder
	query := fmt.Sprintf(qAliasPage, b.clause(), order, b.page(p.Limit, p.Offset), order)
	return s.aliases(ctx, "list asset aliases", query, b.args...)
}

// AssetAliasCount counts the recorded aliases.
func (s *Store) AssetAliasCount(ctx context.Context, _ *store.AssetAliasListParams) (int, error) {
	return s.count(ctx, "count asset aliases", qAliasCount, &builder{})
}

// AssetAliasGet returns one alias with the assets it resolves to.
func (s *Store) AssetAliasGet(ctx context.Context, name string) (*store.AssetAlias, error) {
	what := fmt.Sprintf("get asset alias %q", name)
	out, err := s.aliases(ctx, what, qAliasGet, name)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no DAG declares it and no task added to it: %w", what, core.ErrNotFound)
	}
	return &out[0], nil
}

// aliases folds the rows of qAliasList (ordered by alias) into aliases.
func (s *Store) aliases(ctx context.Context, what, query string, args ...any) ([]store.AssetAlias, error) {
	rows, err := s.reader().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	type row struct {
		alias store.AssetAlias
		asset *store.AliasedAsset
	}
	flat, err := collect(rows, func(r *sql.Rows) (row, error) {
		var (
			x           row
			created     int64
			id          sql.NullInt64
			name, uri   sql.NullString
			active      sql.NullBool
			first, last sql.NullInt64
		)
		if err := r.Scan(&x.alias.ID, &x.alias.Name, &created, &id, &name, &uri, &active, &first, &last); err != nil {
			return x, err
		}
		x.alias.CreatedAt, x.alias.Group = fromMicros(created), core.DefaultAssetGroup
		if id.Valid {
			x.asset = &store.AliasedAsset{ID: id.Int64, Name: name.String, URI: uri.String, Active: active.Bool,
				FirstAssociatedAt: fromMicros(first.Int64), LastAssociatedAt: fromMicros(last.Int64)}
		}
		return x, nil
	})
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	var out []store.AssetAlias
	for _, x := range flat {
		if len(out) == 0 || out[len(out)-1].ID != x.alias.ID {
			x.alias.Assets = []store.AliasedAsset{}
			out = append(out, x.alias)
		}
		if x.asset != nil {
			last := &out[len(out)-1]
			last.Assets = append(last.Assets, *x.asset)
		}
	}
	return out, nil
}

// AssetAliasEventAdd keeps a running try's addition of an asset to an alias.
// The try's row is locked first, so an addition never slips in after the
// try's finish read its additions.
func (s *Store) AssetAliasEventAdd(ctx context.Context, p *store.AssetAliasEventParams) error {
	what := fmt.Sprintf("add asset %d to alias %q for task instance %s", p.AssetID, p.Alias, p.TaskInstanceID)
	extra, err := eventExtra(p.Extra)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return s.inTx(ctx, func(tx *Store) error {
		if err := tx.runningOnly(ctx, what, p.TaskInstanceID, qTILockRunning, p.TaskInstanceID); err != nil {
			return err
		}
		if err := tx.assetExists(ctx, what, p.AssetID); err != nil {
			return err
		}
		var aliasID int64
		err := tx.tx.QueryRowContext(ctx, qAliasIDByName, p.Alias).Scan(&aliasID)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: no DAG declares alias %q: %w", what, p.Alias, core.ErrNotFound)
		}
		if err != nil {
			return tx.wrap(err, "%s: find alias", what)
		}
		_, err = tx.tx.ExecContext(ctx, qAliasEventUpsert, p.TaskInstanceID, aliasID, p.AssetID, extra, micros(p.Now))
		return tx.wrap(err, "%s", what)
	})
}

// AssetAliasEventList returns a try's pending additions.
func (s *Store) AssetAliasEventList(ctx context.Context, tiID string) ([]store.AssetAliasEvent, error) {
	what := "list alias additions of task instance " + tiID
	rows, err := s.reader().QueryContext(ctx, qAliasEventList, tiID)
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	out, err := collect(rows, func(r *sql.Rows) (store.AssetAliasEvent, error) {
		var (
			e       store.AssetAliasEvent
			extra   string
			created int64
		)
		err := r.Scan(&e.Alias, &e.AssetID, &e.AssetName, &extra, &created)
		e.Extra, e.CreatedAt = json.RawMessage(extra), fromMicros(created)
		return e, err
	})
	return out, s.wrap(err, "%s", what)
}

// finishOutletEvents records, in a finishing try's transaction, its outlet
// events when it succeeded: p.OutletEvents and one event per asset (and
// extra) its additions to alias outlets named, each associating the
// aliases with the asset. Whatever the try's end, its additions are
// dropped.
func (s *Store) finishOutletEvents(ctx context.Context, p *store.TaskInstanceFinishParams) error {
	what := fmt.Sprintf("record outlet events of task instance %s", p.ID)
	var pending []store.AssetAliasEvent
	if !p.NoAliases {
		var err error
		if pending, err = s.AssetAliasEventList(ctx, p.ID); err != nil {
			return err
		}
	}
	if len(pending) > 0 {
		if _, err := s.tx.ExecContext(ctx, qAliasEventDelete, p.ID); err != nil {
			return s.wrap(err, "%s: drop alias additions", what)
		}
	}
	if p.State != core.TISuccess {
		return nil
	}
	events := slices.Clone(p.OutletEvents)
	if len(pending) > 0 {
		ti, err := s.TaskInstanceGet(ctx, p.ID)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		events = append(events, aliasEvents(ti, pending, p)...)
	}
	return s.insertOutletEvents(ctx, events)
}

// aliasEvents groups a try's alias additions into one event per asset and
// extra, carrying every alias that named it, with the try's provenance.
func aliasEvents(ti *core.TaskInstance, pending []store.AssetAliasEvent, p *store.TaskInstanceFinishParams) []store.AssetEventParams {
	type key struct {
		asset int64
		extra string
	}
	index := map[key]int{}
	var out []store.AssetEventParams
	for _, e := range pending {
		k := key{e.AssetID, string(e.Extra)}
		i, seen := index[k]
		if !seen {
			i = len(out)
			index[k] = i
			out = append(out, store.AssetEventParams{AssetID: e.AssetID, Extra: e.Extra, SourceKind: core.AssetSourceTask,
				SourceDagID: ti.DagID, SourceRunID: ti.RunID, SourceTaskID: ti.TaskID, SourceMapIndex: ti.MapIndex,
				SourceTryNumber: ti.TryNumber, Now: p.Now})
		}
		out[i].Aliases = append(out[i].Aliases, e.Alias)
	}
	return out
}

// syncAliasSchedule replaces the aliases a DAG is scheduled on (in
// AssetSync's transaction, before the queue is pruned).
func (s *Store) syncAliasSchedule(ctx context.Context, d *core.DAG, now int64) error {
	if _, err := s.tx.ExecContext(ctx, qDagScheduleAliasDelete, d.DagID); err != nil {
		return s.wrap(err, "sync assets of dag %s: clear alias schedule", d.DagID)
	}
	for _, r := range d.AssetSchedule {
		if r.Alias == "" {
			continue
		}
		if _, err := s.tx.ExecContext(ctx, qAssetAliasInsert, r.Alias, now); err != nil {
			return s.wrap(err, "sync assets of dag %s: record alias %s", d.DagID, r.Alias)
		}
		if _, err := s.tx.ExecContext(ctx, qDagScheduleAliasInsert, d.DagID, r.Alias); err != nil {
			return s.wrap(err, "sync assets of dag %s: schedule on alias %s", d.DagID, r.Alias)
		}
	}
	return nil
}

// scheduleMet counts what a DAG's schedule needs (each scheduled asset and
// each scheduled alias) and how much of it the taken queue entries meet: an
// asset by an entry of its own, an alias by an entry of any asset it
// resolves to.
func (s *Store) scheduleMet(ctx context.Context, dagID string, taken []store.AssetQueueEntry) (met, want int, err error) {
	rows, err := s.reader().QueryContext(ctx, qScheduleNeeds, dagID)
	if err != nil {
		return 0, 0, s.wrap(err, "read the asset schedule of dag %s", dagID)
	}
	type need struct{ alias, asset int64 }
	needs, err := collect(rows, func(r *sql.Rows) (need, error) {
		var n need
		return n, r.Scan(&n.alias, &n.asset)
	})
	if err != nil {
		return 0, 0, s.wrap(err, "read the asset schedule of dag %s", dagID)
	}
	queued := make(map[int64]bool, len(taken))
	for _, e := range taken {
		queued[e.AssetID] = true
	}
	aliasMet := map[int64]bool{}
	for _, n := range needs {
		if n.alias != 0 {
			aliasMet[n.alias] = aliasMet[n.alias] || queued[n.asset]
			continue
		}
		want++
		if queued[n.asset] {
			met++
		}
	}
	for _, ok := range aliasMet {
		want++
		if ok {
			met++
		}
	}
	return met, want, nil
}
