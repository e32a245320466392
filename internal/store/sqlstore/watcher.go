package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// syncWatchers makes the asset_watcher rows dag d declares match d's
// assets' watchers, in AssetSync's transaction: new watchers get a trigger
// row (shared with watchers of equal type and kwargs), changed ones move to
// the row of their new definition, removed ones go, and the triggers no one
// uses any more are deleted (their triggerer stops them at its next
// reconcile). A watcher another active DAG declares with another trigger
// is a conflict; declared alike, it stays that DAG's.
func (s *Store) syncWatchers(ctx context.Context, d *core.DAG, ids map[string]int64, now time.Time) error {
	type key struct {
		asset int64
		name  string
	}
	var freed []int64
	kept := map[key]bool{}
	for i := range d.Assets {
		a := &d.Assets[i]
		for _, w := range a.Watchers {
			what := fmt.Sprintf("sync assets of dag %s: watcher %q of asset %q", d.DagID, w.Name, a.Name)
			kwargs, err := core.CanonicalJSON(w.Trigger.Kwargs)
			if err != nil {
				return fmt.Errorf("%s: trigger kwargs: %w: %w", what, err, core.ErrInvalid)
			}
			k := key{ids[a.Name], w.Name}
			kept[k] = true
			var (
				owner, typ, kw string
				tid            sql.NullInt64
			)
			err = s.tx.QueryRowContext(ctx, qWatcherGet, k.asset, k.name).Scan(&owner, &typ, &kw, &tid)
			exists := err == nil
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return s.wrap(err, "%s", what)
			}
			same := exists && typ == w.Trigger.Type && kw == kwargs
			if exists && owner != d.DagID {
				var active bool
				if err := s.tx.QueryRowContext(ctx, qDagActive, owner).Scan(&active); err != nil && !errors.Is(err, sql.ErrNoRows) {
					return s.wrap(err, "%s", what)
				}
				switch {
				case active && same:
					continue // declared alike by another active DAG: it stays that DAG's
				case active:
					return fmt.Errorf("%s: dag %s declares it with trigger %s %s; a watcher's trigger must be the same in every DAG: %w",
						what, owner, typ, kw, core.ErrConflict)
				}
			}
			if same && tid.Valid {
				_, err := s.tx.ExecContext(ctx, qWatcherUpdate, k.asset, k.name, d.DagID, typ, kw, tid.Int64)
				if err := s.wrap(err, "%s", what); err != nil {
					return err
				}
				continue
			}
			trig, err := s.watcherTrigger(ctx, w.Trigger.Type, kwargs, now)
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			q, args := qWatcherInsert, []any{k.asset, k.name, d.DagID, w.Trigger.Type, kwargs, trig, micros(now)}
			if exists {
				q, args = qWatcherUpdate, args[:6]
				if tid.Valid {
					freed = append(freed, tid.Int64)
				}
			}
			if _, err := s.tx.ExecContext(ctx, q, args...); err != nil {
				return s.wrap(err, "%s", what)
			}
		}
	}
	rows, err := s.tx.QueryContext(ctx, qWatcherOfDag, d.DagID)
	if err != nil {
		return s.wrap(err, "sync watchers of dag %s", d.DagID)
	}
	var gone []key
	for rows.Next() {
		var (
			k   key
			tid sql.NullInt64
		)
		if err := rows.Scan(&k.asset, &k.name, &tid); err != nil {
			_ = rows.Close()
			return s.wrap(err, "sync watchers of dag %s", d.DagID)
		}
		if !kept[k] {
			gone = append(gone, k)
			if tid.Valid {
				freed = append(freed, tid.Int64)
			}
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return s.wrap(err, "sync watchers of dag %s", d.DagID)
	}
	for _, k := range gone {
		if _, err := s.tx.ExecContext(ctx, qWatcherDelete, k.asset, k.name); err != nil {
			return s.wrap(err, "sync watchers of dag %s: remove %q", d.DagID, k.name)
		}
	}
	if len(freed) > 0 {
		_, err := s.TriggerDeleteUnused(ctx, freed...)
		return err
	}
	return nil
}

// watcherTrigger returns the watcher trigger row of this type and kwargs,
// creating it when no watcher has one.
func (s *Store) watcherTrigger(ctx context.Context, typ, kwargs string, now time.Time) (int64, error) {
	var id int64
	err := s.tx.QueryRowContext(ctx, qWatcherTriggerFind, typ, kwargs).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		err = s.tx.QueryRowContext(ctx, qTriggerInsert, typ, kwargs, micros(now)).Scan(&id)
	}
	return id, s.wrap(err, "find or create its trigger")
}

// WatcherList lists watchers with their cursor and health.
func (s *Store) WatcherList(ctx context.Context, p *store.WatcherListParams) ([]core.Watcher, error) {
	var b builder
	if p.AssetID != 0 {
		b.where("w.asset_id = ?", p.AssetID)
	}
	if p.TriggerID != 0 {
		b.where("w.trigger_id = ?", p.TriggerID)
	}
	if p.TriggererID != "" {
		b.where("t.triggerer_id = ?", p.TriggererID)
	}
	if p.Running {
		b.where(watcherRunning)
	}
	rows, err := s.reader().QueryContext(ctx, fmt.Sprintf(qWatcherList, b.clause()), b.args...)
	if err != nil {
		return nil, s.wrap(err, "list watchers")
	}
	defer rows.Close()
	var out []core.Watcher
	for rows.Next() {
		w, err := scanWatcher(rows)
		if err != nil {
			return nil, s.wrap(err, "list watchers")
		}
		out = append(out, *w)
	}
	return out, s.wrap(rows.Err(), "list watchers")
}

func scanWatcher(r scanner) (*core.Watcher, error) {
	var (
		w                            core.Watcher
		extra, kwargs                string
		tid, cursorAt                sql.NullInt64
		triggerer, cursor            sql.NullString
		lastPoll, lastEvent, lastErr sql.NullInt64
		lastEventID                  sql.NullInt64
		created                      int64
	)
	if err := r.Scan(&w.AssetID, &w.AssetName, &w.AssetURI, &extra, &w.Name, &w.DagID, &w.Trigger.Type, &kwargs,
		&tid, &triggerer, &cursor, &cursorAt, &lastPoll, &w.LastPollMillis, &lastEvent, &lastEventID, &w.Events,
		&w.LastError, &lastErr, &w.ErrorsInRow, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(extra), &w.AssetExtra); err != nil {
		return nil, fmt.Errorf("decode extra of asset %s: %w", w.AssetName, err)
	}
	w.Trigger.Kwargs = json.RawMessage(kwargs)
	w.TriggerID, w.TriggererID = tid.Int64, triggerer.String
	if cursor.Valid {
		w.Cursor = json.RawMessage(cursor.String)
		w.CursorVersion = cursorAt.Int64
		w.CursorUpdatedAt = ptrMicros(cursorAt)
	}
	w.LastPollAt, w.LastEventAt, w.LastErrorAt = ptrMicros(lastPoll), ptrMicros(lastEvent), ptrMicros(lastErr)
	w.LastEventID = lastEventID.Int64
	w.CreatedAt = fromMicros(created)
	return &w, nil
}

// WatcherCommit records a poll's events and cursors in one transaction
// behind the trigger's hold.
func (s *Store) WatcherCommit(ctx context.Context, p *store.WatcherCommitParams) (*store.WatcherCommitResult, error) {
	what := fmt.Sprintf("commit poll of trigger %d", p.TriggerID)
	res := &store.WatcherCommitResult{}
	err := s.inTx(ctx, func(tx *Store) error {
		res.EventIDs, res.Versions = res.EventIDs[:0], res.Versions[:0]
		if err := tx.TriggerHold(ctx, p.TriggerID, p.TriggererID); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		checked := map[[2]any]bool{}
		onTrigger := func(asset int64, name string) error {
			k := [2]any{asset, name}
			if checked[k] {
				return nil
			}
			var one int
			err := tx.tx.QueryRowContext(ctx, qWatcherOnTrigger, asset, name, p.TriggerID).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%s: watcher %q of asset %d is no longer run by this trigger: %w", what, name, asset, core.ErrConflict)
			}
			checked[k] = true
			return tx.wrap(err, "%s", what)
		}
		type last struct {
			id    int64
			count int
		}
		latest := map[[2]any]*last{}
		for i := range p.Events {
			e := &p.Events[i]
			if err := onTrigger(e.AssetID, e.Watcher); err != nil {
				return err
			}
			id, err := tx.eventInsert(ctx, e.AssetID, &store.AssetEventParams{Extra: e.Extra, PartitionKey: e.PartitionKey,
				SourceKind: core.AssetSourceWatcher, SourceWatcher: e.Watcher, Now: p.Now})
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			res.EventIDs = append(res.EventIDs, id)
			k := [2]any{e.AssetID, e.Watcher}
			if latest[k] == nil {
				latest[k] = &last{}
			}
			latest[k].id, latest[k].count = id, latest[k].count+1
		}
		for k, l := range latest {
			if _, err := tx.tx.ExecContext(ctx, qWatcherEvents, k[0], k[1], micros(p.Now), l.id, l.count); err != nil {
				return tx.wrap(err, "%s: record health", what)
			}
		}
		for i := range p.Cursors {
			c := &p.Cursors[i]
			if err := onTrigger(c.AssetID, c.Watcher); err != nil {
				return err
			}
			v, err := tx.cursorAdvance(ctx, c, p.Now)
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			res.Versions = append(res.Versions, v)
		}
		by := core.WatcherWriter("")
		for i := range p.State {
			w := &p.State[i]
			if err := onTrigger(w.AssetID, w.Watcher); err != nil {
				return err
			}
			by.Watcher = w.Watcher
			var err error
			if w.Value == nil {
				_, err = tx.tx.ExecContext(ctx, qAssetStateDelete, w.AssetID, w.Key)
			} else {
				_, err = tx.tx.ExecContext(ctx, qAssetStateSet, w.AssetID, w.Key, string(w.Value), micros(p.Now), by.Kind,
					by.DagID, by.RunID, by.TaskID, by.MapIndex, by.TryNumber, by.User, by.Watcher)
			}
			if err != nil {
				return tx.wrap(err, "%s: write state key %q", what, w.Key)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// cursorAdvance writes c when the cursor is still at c.Version and returns
// the new version: the write's time in microseconds, after the old one.
func (s *Store) cursorAdvance(ctx context.Context, c *store.WatcherCursor, now time.Time) (int64, error) {
	key := core.WatcherCursorKey(c.Watcher)
	var cur int64
	err := s.tx.QueryRowContext(ctx, qCursorVersion, c.AssetID, key).Scan(&cur)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, s.wrap(err, "read cursor of watcher %q", c.Watcher)
	}
	if cur != c.Version {
		return 0, fmt.Errorf("the cursor of watcher %q was changed since the poll read it: %w", c.Watcher, core.ErrConflict)
	}
	v := max(micros(now), cur+1)
	by := core.WatcherWriter(c.Watcher)
	_, err = s.tx.ExecContext(ctx, qAssetStateSet, c.AssetID, key, string(c.Value), v, by.Kind, by.DagID, by.RunID,
		by.TaskID, by.MapIndex, by.TryNumber, by.User, by.Watcher)
	return v, s.wrap(err, "write cursor of watcher %q", c.Watcher)
}

// WatcherReportPolls records polls in the health of their watchers.
func (s *Store) WatcherReportPolls(ctx context.Context, polls []store.WatcherPoll) error {
	if len(polls) == 0 {
		return nil
	}
	return s.inTx(ctx, func(tx *Store) error {
		for _, p := range polls {
			errAt := p.ErrAt
			if errAt.IsZero() {
				errAt = p.At
			}
			if _, err := tx.tx.ExecContext(ctx, qWatcherPolled, p.TriggerID, micros(p.At), p.Duration.Milliseconds(),
				p.ErrorsInRow, p.Err, micros(errAt)); err != nil {
				return tx.wrap(err, "record poll of trigger %d", p.TriggerID)
			}
		}
		return nil
	})
}

// WatcherAttachTriggers gives running watchers without a trigger one.
func (s *Store) WatcherAttachTriggers(ctx context.Context, now time.Time) (int, error) {
	n := 0
	err := s.inTx(ctx, func(tx *Store) error {
		rows, err := tx.tx.QueryContext(ctx, qWatcherUnattached)
		if err != nil {
			return tx.wrap(err, "attach watcher triggers")
		}
		type row struct {
			asset             int64
			name, typ, kwargs string
		}
		var todo []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.asset, &r.name, &r.typ, &r.kwargs); err != nil {
				_ = rows.Close()
				return tx.wrap(err, "attach watcher triggers")
			}
			todo = append(todo, r)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return tx.wrap(err, "attach watcher triggers")
		}
		for _, r := range todo {
			id, err := tx.watcherTrigger(ctx, r.typ, r.kwargs, now)
			if err != nil {
				return fmt.Errorf("attach a trigger to watcher %q of asset %d: %w", r.name, r.asset, err)
			}
			if _, err := tx.tx.ExecContext(ctx, qWatcherAttach, r.asset, r.name, id); err != nil {
				return tx.wrap(err, "attach a trigger to watcher %q of asset %d", r.name, r.asset)
			}
			n++
		}
		return nil
	})
	return n, err
}
