package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// AssetQueueReady returns the active, unpaused DAGs whose every scheduled
// asset has a queued event.
func (s *Store) AssetQueueReady(ctx context.Context) ([]string, error) {
	out, err := s.dagIDs(ctx, "list dags ready for asset-triggered runs", qAssetQueueReady)
	if err != nil {
		return nil, err
	}
	cond, err := s.conditionalReady(ctx)
	if err != nil {
		return nil, fmt.Errorf("list dags ready for asset-triggered runs: %w", err)
	}
	return mergeReady(out, cond), nil
}

// AssetQueueList returns a DAG's queued entries by asset name.
func (s *Store) AssetQueueList(ctx context.Context, dagID string) ([]store.AssetQueueEntry, error) {
	what := "list queued asset events of dag " + dagID
	rows, err := s.reader().QueryContext(ctx, qAssetQueueList, dagID)
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	out, err := collect(rows, scanQueueEntry)
	return out, s.wrap(err, "%s", what)
}

// AssetQueueFind returns the queued entries p selects.
func (s *Store) AssetQueueFind(ctx context.Context, p *store.AssetQueueParams) ([]store.AssetQueueEntry, error) {
	b, err := queueFilter(p)
	if err != nil {
		return nil, err
	}
	rows, err := s.reader().QueryContext(ctx, fmt.Sprintf(qAssetQueueFind, b.clause()), b.args...)
	if err != nil {
		return nil, s.wrap(err, "find queued asset events")
	}
	out, err := collect(rows, scanQueueEntry)
	return out, s.wrap(err, "find queued asset events")
}

// AssetQueueClear removes the queued entries p selects from both queues
// (the coalescing one and the per-partition one) in one transaction, and
// returns how many rows went.
func (s *Store) AssetQueueClear(ctx context.Context, p *store.AssetQueueParams) (int, error) {
	b, err := queueFilter(p)
	if err != nil {
		return 0, err
	}
	var n int
	err = s.inTx(ctx, func(tx *Store) error {
		for _, table := range []string{"asset_dag_run_queue", "asset_event_queue"} {
			res, err := tx.tx.ExecContext(ctx, "DELETE FROM "+table+b.clause(), b.args...)
			if err != nil {
				return tx.wrap(err, "clear queued asset events from %s", table)
			}
			cleared, err := res.RowsAffected()
			if err != nil {
				return tx.wrap(err, "clear queued asset events from %s", table)
			}
			n += int(cleared)
		}
		return nil
	})
	return n, err
}

// queueFilter is the WHERE clause of p on either queue table (their
// columns share names); a filter on neither DAG nor asset is refused.
func queueFilter(p *store.AssetQueueParams) (*builder, error) {
	if p.DagID == "" && p.AssetID == 0 {
		return nil, fmt.Errorf("queued asset events: name a DAG or an asset: %w", core.ErrInvalid)
	}
	var b builder
	if p.DagID != "" {
		b.where("target_dag_id = ?", p.DagID)
	}
	if p.AssetID != 0 {
		b.where("asset_id = ?", p.AssetID)
	}
	if !p.Before.IsZero() {
		b.where("created_at < ?", micros(p.Before))
	}
	return &b, nil
}

func scanQueueEntry(r *sql.Rows) (store.AssetQueueEntry, error) {
	var (
		e       store.AssetQueueEntry
		created int64
	)
	err := r.Scan(&e.AssetID, &e.AssetName, &e.DagID, &e.FirstEventID, &e.LastEventID, &created)
	e.CreatedAt = fromMicros(created)
	return e, err
}

// AssetQueueConsume takes the DAG's queued entries and records their events
// as consumed by the run; ErrConflict when an entry is missing.
func (s *Store) AssetQueueConsume(ctx context.Context, dagID string, dagRunID int64) ([]core.AssetEvent, error) {
	what := fmt.Sprintf("consume queued asset events of dag %s for run %d", dagID, dagRunID)
	var events []core.AssetEvent
	err := s.inTx(ctx, func(tx *Store) error {
		rows, err := tx.tx.QueryContext(ctx, qAssetQueueTake, dagID)
		if err != nil {
			return tx.wrap(err, "%s", what)
		}
		taken, err := collect(rows, func(r *sql.Rows) (store.AssetQueueEntry, error) {
			var e store.AssetQueueEntry
			return e, r.Scan(&e.AssetID, &e.FirstEventID, &e.LastEventID)
		})
		if err != nil {
			return tx.wrap(err, "%s", what)
		}
		consumed := make([][]any, len(taken))
		for i, e := range taken {
			consumed[i] = []any{dagRunID, e.AssetID, e.FirstEventID, e.LastEventID}
		}
		events, err = tx.consume(ctx, dagID, dagRunID, taken, what, qAssetConsume, consumed)
		return err
	})
	if err != nil {
		return nil, err
	}
	return events, nil
}

// consume checks that the taken queue entries meet the DAG's schedule
// (ErrConflict otherwise: another scheduler took them first), records
// their events as consumed by the run (query once per row of args) and
// returns the run's events; what names the operation in errors.
func (s *Store) consume(ctx context.Context, dagID string, dagRunID int64, taken []store.AssetQueueEntry,
	what, query string, rows [][]any) ([]core.AssetEvent, error) {
	ok, why, err := s.scheduleSatisfied(ctx, dagID, taken)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if !ok {
		return nil, fmt.Errorf("%s: %s: %w", what, why, core.ErrConflict)
	}
	for _, args := range rows {
		if _, err := s.tx.ExecContext(ctx, query, args...); err != nil {
			return nil, s.wrap(err, "%s", what)
		}
	}
	return s.AssetEventsOfRun(ctx, dagRunID)
}

// insertOutletEvents records a finished try's outlet events (in its
// transaction).
func (s *Store) insertOutletEvents(ctx context.Context, events []store.AssetEventParams) error {
	for i := range events {
		if _, err := s.AssetEventInsert(ctx, &events[i]); err != nil {
			return err
		}
	}
	return nil
}
