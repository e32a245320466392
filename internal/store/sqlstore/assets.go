package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// AssetSync records the assets a DAG version defines and uses, replacing the
// DAG's earlier references, and deactivates assets no active DAG defines.
func (s *Store) AssetSync(ctx context.Context, p *store.AssetSyncParams) error {
	d := p.Spec
	now := micros(p.Now)
	return s.inTx(ctx, func(tx *Store) error {
		since, err := tx.refTimes(ctx, d.DagID)
		if err != nil {
			return err
		}
		for _, q := range []string{qDagAssetDelete, qDagScheduleAssetDelete, qTaskInletDelete, qTaskOutletDelete} {
			if _, err := tx.tx.ExecContext(ctx, q, d.DagID); err != nil {
				return tx.wrap(err, "sync assets of dag %s: clear references", d.DagID)
			}
		}
		ids := make(map[string]int64, len(d.Assets))
		for i := range d.Assets {
			id, err := tx.assetUpsert(ctx, d.DagID, &d.Assets[i], now)
			if err != nil {
				return err
			}
			ids[d.Assets[i].Name] = id
			if _, err := tx.tx.ExecContext(ctx, qDagAssetInsert, d.DagID, id); err != nil {
				return tx.wrap(err, "sync assets of dag %s: record asset %s", d.DagID, d.Assets[i].Name)
			}
		}
		for _, a := range d.ConcreteAssets(d.AssetSchedule) {
			id := ids[a.Name]
			if _, err := tx.tx.ExecContext(ctx, qDagScheduleAssetInsert, d.DagID, id, since.of(store.AssetLinkScheduled, id, "", now), now); err != nil {
				return tx.wrap(err, "sync assets of dag %s: schedule on %s", d.DagID, a.Name)
			}
		}
		if err := tx.syncAliasSchedule(ctx, d, now); err != nil {
			return err
		}
		if err := tx.syncAssetCondition(ctx, d); err != nil {
			return err
		}
		if err := tx.syncAssetRuns(ctx, d); err != nil {
			return err
		}
		if _, err := tx.tx.ExecContext(ctx, qAssetQueuePrune, d.DagID); err != nil {
			return tx.wrap(err, "sync assets of dag %s: prune queue", d.DagID)
		}
		for i := range d.Tasks {
			t := &d.Tasks[i]
			for _, use := range []struct {
				refs  []core.AssetRef
				query string
				kind  string
			}{{t.Inlets, qTaskInletInsert, store.AssetLinkReader}, {t.Outlets, qTaskOutletInsert, store.AssetLinkProducer}} {
				for _, a := range d.ConcreteAssets(use.refs) {
					id := ids[a.Name]
					if _, err := tx.tx.ExecContext(ctx, use.query, d.DagID, t.TaskID, id, since.of(use.kind, id, t.TaskID, now), now); err != nil {
						return tx.wrap(err, "sync assets of dag %s: task %s uses %s", d.DagID, t.TaskID, a.Name)
					}
				}
				for _, r := range use.refs {
					if r.Alias == "" {
						continue
					}
					if _, err := tx.tx.ExecContext(ctx, qAssetAliasInsert, r.Alias, now); err != nil {
						return tx.wrap(err, "sync assets of dag %s: record alias %s", d.DagID, r.Alias)
					}
				}
			}
		}
		if err := tx.syncWatchers(ctx, d, ids, p.Now); err != nil {
			return err
		}
		_, err = tx.AssetDeactivateOrphans(ctx, p.Now)
		return err
	})
}

// refTimes holds when each of a DAG's asset references was first
// recorded, by kind, asset and task.
type refTimes map[string]int64

func refKey(kind string, assetID int64, taskID string) string {
	return fmt.Sprintf("%s %d %s", kind, assetID, taskID)
}

// of is the created_at of a reference: the one recorded, else now.
func (r refTimes) of(kind string, assetID int64, taskID string, now int64) int64 {
	if t, ok := r[refKey(kind, assetID, taskID)]; ok {
		return t
	}
	return now
}

// refTimes reads when each of dag's asset references was first recorded,
// before a sync replaces them.
func (s *Store) refTimes(ctx context.Context, dagID string) (refTimes, error) {
	rows, err := s.tx.QueryContext(ctx, qDagAssetRefTimes, dagID)
	if err != nil {
		return nil, s.wrap(err, "sync assets of dag %s: read references", dagID)
	}
	type ref struct {
		key string
		at  int64
	}
	refs, err := collect(rows, func(r *sql.Rows) (ref, error) {
		var (
			kind, task string
			asset, at  int64
		)
		err := r.Scan(&kind, &asset, &task, &at)
		return ref{refKey(kind, asset, task), at}, err
	})
	if err != nil {
		return nil, s.wrap(err, "sync assets of dag %s: read references", dagID)
	}
	out := make(refTimes, len(refs))
	for _, r := range refs {
		out[r.key] = r.at
	}
	return out, nil
}

// assetUpsert creates the asset a DAG defines, or brings the existing one
// (found by name, else by uri: a renamed asset) up to date. Another active
// DAG's different definition of the name or uri is a conflict.
func (s *Store) assetUpsert(ctx context.Context, dagID string, a *core.Asset, now int64) (int64, error) {
	what := fmt.Sprintf("sync assets of dag %s: asset %q", dagID, a.Name)
	group := a.Group
	if group == "" {
		group = core.DefaultAssetGroup
	}
	extra, err := json.Marshal(nonNilMap(a.Extra))
	if err != nil {
		return 0, fmt.Errorf("%s: encode extra: %w", what, err)
	}
	cur, err := s.AssetGetByName(ctx, a.Name)
	if errors.Is(err, core.ErrNotFound) {
		cur, err = s.AssetGetByURI(ctx, a.URI)
	}
	switch {
	case errors.Is(err, core.ErrNotFound):
		var id int64
		err := s.tx.QueryRowContext(ctx, qAssetInsert, a.Name, a.URI, group, string(extra), now).Scan(&id)
		return id, s.wrap(err, "%s: create", what)
	case err != nil:
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	if cur.Name != a.Name || cur.URI != a.URI {
		var other string
		err := s.tx.QueryRowContext(ctx, qAssetOtherDefiner, cur.ID, dagID).Scan(&other)
		if err == nil {
			return 0, fmt.Errorf("%s with uri %q: dag %s defines asset %q with uri %q; an asset's name and uri must match in every DAG: %w",
				what, a.URI, other, cur.Name, cur.URI, core.ErrConflict)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, s.wrap(err, "%s: find other definitions", what)
		}
	}
	// An asset the sync leaves as it was keeps its updated_at: a new
	// version of a DAG that defines it changes nothing of it.
	if was, err := json.Marshal(nonNilMap(cur.Extra)); err == nil && cur.Active && cur.Name == a.Name && cur.URI == a.URI &&
		cur.Group == group && bytes.Equal(was, extra) {
		return cur.ID, nil
	}
	_, err = s.tx.ExecContext(ctx, qAssetUpdate, cur.ID, a.Name, a.URI, group, string(extra), now)
	return cur.ID, s.wrap(err, "%s: update", what)
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// AssetDeactivateOrphans marks inactive the assets no active DAG defines.
func (s *Store) AssetDeactivateOrphans(ctx context.Context, now time.Time) (int, error) {
	res, err := s.writer().ExecContext(ctx, qAssetDeactivateOrphans, micros(now))
	if err != nil {
		return 0, s.wrap(err, "deactivate orphaned assets")
	}
	n, err := res.RowsAffected()
	return int(n), s.wrap(err, "deactivate orphaned assets")
}

// AssetGet returns an asset with the DAGs and tasks that use it.
func (s *Store) AssetGet(ctx context.Context, id int64) (*core.AssetModel, error) {
	a, err := s.assetOne(ctx, fmt.Sprintf("get asset %d", id), qAssetGet, id)
	if err != nil {
		return nil, err
	}
	uses := []core.AssetModel{*a}
	if err := s.fillUses(ctx, uses); err != nil {
		return nil, err
	}
	return &uses[0], nil
}

// AssetGetByName returns the asset with the name (without its users).
func (s *Store) AssetGetByName(ctx context.Context, name string) (*core.AssetModel, error) {
	return s.assetOne(ctx, fmt.Sprintf("get asset named %q", name), qAssetGetByName, name)
}

// AssetGetByURI returns the asset with the uri (without its users).
func (s *Store) AssetGetByURI(ctx context.Context, uri string) (*core.AssetModel, error) {
	return s.assetOne(ctx, fmt.Sprintf("get asset with uri %q", uri), qAssetGetByURI, uri)
}

func (s *Store) assetOne(ctx context.Context, what, query string, arg any) (*core.AssetModel, error) {
	a, err := scanAsset(s.reader().QueryRowContext(ctx, query, arg))
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	return a, nil
}

// AssetList lists a page of assets (by name unless p.OrderBy says
// otherwise).
func (s *Store) AssetList(ctx context.Context, p *store.AssetListParams) ([]core.AssetModel, error) {
	list, err := listPage(ctx, s, "list assets", qAssetList, assetFilter(p), &assetOrder, p.Page, scanAsset)
	if err != nil {
		return nil, err
	}
	return list, s.fillUses(ctx, list)
}

// AssetCount counts the assets AssetList would list without paging.
func (s *Store) AssetCount(ctx context.Context, p *store.AssetListParams) (int, error) {
	return s.count(ctx, "count assets", qAssetCount, assetFilter(p))
}

// assetFilter is the WHERE clause of AssetList and AssetCount.
func assetFilter(p *store.AssetListParams) *builder {
	var b builder
	if p.NamePattern != "" {
		b.where("name LIKE ?", p.NamePattern)
	}
	if p.URIPattern != "" {
		b.where("uri LIKE ?", p.URIPattern)
	}
	if p.Active != nil {
		b.where("active = ?", *p.Active)
	}
	return &b
}

func scanAsset(r scanner) (*core.AssetModel, error) {
	var (
		a                core.AssetModel
		extra            string
		inactive         sql.NullInt64
		created, updated int64
	)
	if err := r.Scan(&a.ID, &a.Name, &a.URI, &a.Group, &extra, &a.Active, &inactive, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(extra), &a.Extra); err != nil {
		return nil, fmt.Errorf("decode extra of asset %s: %w", a.Name, err)
	}
	a.InactiveSince = ptrMicros(inactive)
	a.CreatedAt, a.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &a, nil
}

// AssetEventInsert records an event and queues it for the DAGs scheduled on
// its asset, in one transaction.
func (s *Store) AssetEventInsert(ctx context.Context, p *store.AssetEventParams) (*core.AssetEvent, error) {
	switch p.SourceKind {
	case core.AssetSourceTask, core.AssetSourceAPI, core.AssetSourceWatcher, core.AssetSourceCallback:
	default:
		return nil, fmt.Errorf("record asset event: source kind %q is not %s, %s, %s or %s: %w",
			p.SourceKind, core.AssetSourceTask, core.AssetSourceAPI, core.AssetSourceWatcher, core.AssetSourceCallback, core.ErrInvalid)
	}
	if s.tx != nil {
		return s.eventRecord(ctx, p)
	}
	return s.insertEvent(ctx, p)
}

// eventRecord records p's event in the caller's transaction (s is bound
// to it) and returns it.
func (s *Store) eventRecord(ctx context.Context, p *store.AssetEventParams) (*core.AssetEvent, error) {
	var (
		a       *core.AssetModel
		err     error
		assetID = p.AssetID
	)
	if assetID == 0 {
		if a, err = s.AssetGetByName(ctx, p.AssetName); err != nil {
			return nil, fmt.Errorf("record asset event: %w", err)
		}
		assetID = a.ID
	}
	id, err := s.eventInsert(ctx, assetID, p)
	if err != nil {
		return nil, err
	}
	if a != nil { // the asset is known: no read-back
		return recordedEvent(id, a, p)
	}
	ev, err := scanAssetEvent(s.tx.QueryRowContext(ctx, qAssetEventGet, id))
	return ev, s.wrap(err, "record event of asset %d: read back", assetID)
}

// recordedEvent returns event id of asset a as eventInsert stored it from
// p: what reading it back would return, without the read.
func recordedEvent(id int64, a *core.AssetModel, p *store.AssetEventParams) (*core.AssetEvent, error) {
	extra, err := eventExtra(p.Extra)
	if err != nil {
		return nil, err
	}
	ev := &core.AssetEvent{ID: id, AssetID: a.ID, Name: a.Name, URI: a.URI, Group: a.Group,
		Extra: json.RawMessage(extra), PartitionKey: p.PartitionKey, PartitionDate: utcPtr(p.PartitionDate),
		IdempotencyKey: p.IdempotencyKey, SourceKind: p.SourceKind, SourceDagID: p.SourceDagID,
		SourceRunID: p.SourceRunID, SourceTaskID: p.SourceTaskID, SourceMapIndex: p.SourceMapIndex,
		SourceTryNumber: p.SourceTryNumber, SourceUser: p.SourceUser, SourceWatcher: p.SourceWatcher,
		Timestamp: fromMicros(micros(p.Now))}
	if p.SourceTaskID == "" {
		ev.SourceMapIndex = core.NoMapIndex // no task, no map index
	}
	return ev, nil
}

// eventInsert records an event of asset assetID, associates p's aliases
// and queues it for the DAGs scheduled on it (or on the aliases), in the
// caller's transaction; it returns the event's id.
func (s *Store) eventInsert(ctx context.Context, assetID int64, p *store.AssetEventParams) (int64, error) {
	id, err := s.eventRow(ctx, assetID, p)
	if err != nil {
		return 0, err
	}
	return id, s.enqueueEvent(ctx, assetID, id, p)
}

// eventRow associates p's aliases with asset assetID and inserts the
// event's row, in the caller's transaction, without queueing it; it
// returns the event's id.
func (s *Store) eventRow(ctx context.Context, assetID int64, p *store.AssetEventParams) (int64, error) {
	what := fmt.Sprintf("record event of asset %d", assetID)
	for _, alias := range p.Aliases {
		if err := s.AssetAliasAssociate(ctx, &store.AssetAliasAssociateParams{Alias: alias, AssetID: assetID, Now: p.Now}); err != nil {
			return 0, fmt.Errorf("%s: %w", what, err)
		}
	}
	args, err := eventArgs(assetID, p)
	if err != nil {
		return 0, err
	}
	var id int64
	if err := s.writer().QueryRowContext(ctx, qAssetEventInsert, args...).Scan(&id); err != nil {
		return 0, s.wrap(err, "%s", what)
	}
	s.noteEvent(p.SourceKind)
	return id, nil
}

// eventArgs returns the arguments of qAssetEventInsert for an event of
// asset assetID.
func eventArgs(assetID int64, p *store.AssetEventParams) ([]any, error) {
	extra, err := eventExtra(p.Extra)
	if err != nil {
		return nil, err
	}
	mapIndex := p.SourceMapIndex
	if p.SourceTaskID == "" {
		mapIndex = core.NoMapIndex // no task, no map index
	}
	return []any{assetID, extra, p.PartitionKey, p.SourceKind,
		nullStr(p.SourceDagID), nullStr(p.SourceRunID), nullStr(p.SourceTaskID), mapIndex,
		p.SourceTryNumber, nullStr(p.SourceWatcher), micros(p.Now), nullMicros(p.PartitionDate), nullStr(p.IdempotencyKey),
		nullStr(p.SourceUser), nullID(p.SourceCallbackID), p.CallbackDepth}, nil
}

// eventExtra checks that extra is a JSON object and returns it compacted.
func eventExtra(raw json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}", nil
	}
	// A JSON object: valid JSON whose first token is '{' (checked without
	// decoding it into a map: an emission's extra was decoded and masked
	// once already, in package emission).
	if t := bytes.TrimSpace(raw); t[0] != '{' || !json.Valid(t) {
		return "", fmt.Errorf("record asset event: extra must be a JSON object such as {\"rows\": 10}, got %.40s: %w",
			raw, core.ErrInvalid)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", fmt.Errorf("record asset event: extra: %w: %w", err, core.ErrInvalid)
	}
	return buf.String(), nil
}

func nullStr(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// AssetEventList lists a page of events (oldest first unless p.OrderBy
// says otherwise), from p.Cursor when set.
func (s *Store) AssetEventList(ctx context.Context, p *store.AssetEventListParams) ([]core.AssetEvent, error) {
	b := eventFilter(p)
	if err := cursor(b, "e.id", "id", p.Cursor, p.Page); err != nil {
		return nil, fmt.Errorf("list asset events: %w", err)
	}
	return listPage(ctx, s, "list asset events", qAssetEventList, b, &assetEventOrder, p.Page, scanAssetEvent)
}

// AssetEventCount counts the events AssetEventList would list without
// paging and without the cursor.
func (s *Store) AssetEventCount(ctx context.Context, p *store.AssetEventListParams) (int, error) {
	return s.count(ctx, "count asset events", qAssetEventCount, eventFilter(p))
}

// lastEvents returns each asset's newest event, in one query.
func (s *Store) lastEvents(ctx context.Context, assetIDs []int64) (map[int64]core.LastAssetEvent, error) {
	out := map[int64]core.LastAssetEvent{}
	if len(assetIDs) == 0 {
		return out, nil
	}
	var b builder
	rows, err := s.reader().QueryContext(ctx, fmt.Sprintf(qAssetLastEvents, ints(&b, assetIDs)), b.args...)
	if err != nil {
		return nil, s.wrap(err, "last asset events")
	}
	_, err = collect(rows, func(r *sql.Rows) (struct{}, error) {
		var assetID, id, at int64
		err := r.Scan(&assetID, &id, &at)
		out[assetID] = core.LastAssetEvent{ID: id, Timestamp: fromMicros(at)}
		return struct{}{}, err
	})
	return out, s.wrap(err, "last asset events")
}

// eventFilter is the WHERE clause of AssetEventList and AssetEventCount; it
// names only asset_event's columns (alias e).
func eventFilter(p *store.AssetEventListParams) *builder {
	var b builder
	if p.AssetID != 0 {
		b.where("e.asset_id = ?", p.AssetID)
	}
	for _, f := range []struct{ col, v string }{
		{"e.source_dag_id", p.SourceDagID}, {"e.source_run_id", p.SourceRunID}, {"e.source_task_id", p.SourceTaskID},
		{"e.partition_key", p.PartitionKey},
	} {
		if f.v != "" {
			b.where(f.col+" = ?", f.v)
		}
	}
	if p.SourceMapIndex != nil {
		b.where("e.source_map_index = ?", *p.SourceMapIndex)
	}
	if p.AssetNameSearch != "" {
		cond, arg := containsCond("name", p.AssetNameSearch)
		b.where("e.asset_id IN (SELECT id FROM asset WHERE "+cond+")", arg)
	}
	b.within("e.timestamp", p.Timestamp)
	if p.ConsumedByRunID != 0 {
		b.where(qEventConsumedBy, p.ConsumedByRunID)
	}
	return &b
}

// AssetEventGetByIdempotencyKey returns the event of asset assetID
// recorded with key.
func (s *Store) AssetEventGetByIdempotencyKey(ctx context.Context, assetID int64, key string) (*core.AssetEvent, error) {
	ev, err := scanAssetEvent(s.reader().QueryRowContext(ctx, qAssetEventByKey, assetID, key))
	return ev, s.wrap(err, "get asset event with idempotency key %q", key)
}

// AssetEventsOfRun returns the events a run consumed.
func (s *Store) AssetEventsOfRun(ctx context.Context, dagRunID int64) ([]core.AssetEvent, error) {
	return s.queryEvents(ctx, fmt.Sprintf("list asset events of dag run %d", dagRunID), qAssetEventsOfRun, dagRunID)
}

func (s *Store) queryEvents(ctx context.Context, what, query string, args ...any) ([]core.AssetEvent, error) {
	rows, err := s.reader().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	out, err := collect(rows, func(r *sql.Rows) (core.AssetEvent, error) {
		ev, err := scanAssetEvent(r)
		if err != nil {
			return core.AssetEvent{}, err
		}
		return *ev, nil
	})
	return out, s.wrap(err, "%s", what)
}

func scanAssetEvent(r scanner) (*core.AssetEvent, error) {
	var (
		ev             core.AssetEvent
		extra          string
		part           sql.NullString
		dag, run, task sql.NullString
		watcher        sql.NullString
		timestamp      int64
		partDate       sql.NullInt64
		key, user      sql.NullString
		callback       sql.NullInt64
	)
	if err := r.Scan(&ev.ID, &ev.AssetID, &ev.Name, &ev.URI, &ev.Group, &extra, &part, &ev.SourceKind,
		&dag, &run, &task, &ev.SourceMapIndex, &ev.SourceTryNumber, &watcher, &timestamp, &partDate, &key, &user,
		&callback, &ev.CallbackDepth); err != nil {
		return nil, err
	}
	ev.SourceCallbackID = callback.Int64
	ev.PartitionDate, ev.IdempotencyKey, ev.SourceUser = ptrMicros(partDate), key.String, user.String
	ev.Extra = json.RawMessage(extra)
	if part.Valid {
		ev.PartitionKey = &part.String
	}
	ev.SourceDagID, ev.SourceRunID, ev.SourceTaskID = dag.String, run.String, task.String
	ev.SourceWatcher = watcher.String
	ev.Timestamp = fromMicros(timestamp)
	return &ev, nil
}
