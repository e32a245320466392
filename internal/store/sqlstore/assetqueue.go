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
	out, err := collect(rows, func(r *sql.Rows) (store.AssetQueueEntry, error) {
		var (
			e       store.AssetQueueEntry
			created int64
		)
		err := r.Scan(&e.AssetID, &e.AssetName, &e.DagID, &e.FirstEventID, &e.LastEventID, &created)
		e.CreatedAt = fromMicros(created)
		return e, err
	})
	return out, s.wrap(err, "%s", what)
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
