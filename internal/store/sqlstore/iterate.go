package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// openProducerStream creates the stream a producer task's trigger
// appends to, or checks that it is still open (a retry of the producer
// resumes it).
func (s *Store) openProducerStream(ctx context.Context, p *store.TaskInstanceDeferParams) error {
	head, err := scanStream(s.tx.QueryRowContext(ctx, qStreamLock, p.StreamID, micros(p.Now)))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if p.MaxPending < 1 {
			return fmt.Errorf("open stream %s: a max_pending of at least 1 is required: %w", p.StreamID, core.ErrInvalid)
		}
		_, err := s.tx.ExecContext(ctx, qStreamInsert, p.StreamID, p.MaxPending, micros(p.Now))
		return s.wrap(err, "open stream %s", p.StreamID)
	case err != nil:
		return s.wrap(err, "open stream %s", p.StreamID)
	case head.Closed:
		return fmt.Errorf("defer task instance %s: its stream %s is closed (its last event has sequence index %d); nothing changed: %w",
			p.ID, p.StreamID, head.LastIndex(), core.ErrInvalid)
	}
	return nil
}

// TaskInstanceIterate creates a stream-mapped task's next instances and
// consumes their envelopes in one transaction. Lock order as everywhere
// for streams: the stream's head first.
func (s *Store) TaskInstanceIterate(ctx context.Context, p *store.TaskInstanceIterateParams) error {
	what := fmt.Sprintf("iterate task %s of dag run %d over stream %s", p.TaskID, p.DagRunID, p.StreamID)
	if want := p.Through - p.From + 1; want != int64(len(p.Instances)) || (want == 0 && !p.Close) {
		return fmt.Errorf("%s: %d instances given for sequence indexes %d..%d: %w", what, len(p.Instances), p.From, p.Through, core.ErrInvalid)
	}
	return s.inTx(ctx, func(tx *Store) error {
		if _, err := scanStream(tx.tx.QueryRowContext(ctx, qStreamLock, p.StreamID, micros(p.Now))); err != nil {
			return tx.wrap(err, "%s", what)
		}
		var placeholder string
		if err := tx.tx.QueryRowContext(ctx, qTIPlaceholderNone, p.DagRunID, p.TaskID).Scan(&placeholder); err != nil {
			return tx.wrap(err, "%s: find its placeholder in state none", what)
		}
		if len(p.Instances) > 0 {
			res, err := tx.tx.ExecContext(ctx, qStreamConsume, p.StreamID, p.From, p.Through, micros(p.Now))
			if err != nil {
				return tx.wrap(err, "%s: consume events %d..%d", what, p.From, p.Through)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return tx.wrap(err, "%s", what)
			}
			if n != int64(len(p.Instances)) {
				return fmt.Errorf("%s: %d of events %d..%d are pending: %w", what, n, p.From, p.Through, core.ErrConflict)
			}
			if _, err := tx.tx.ExecContext(ctx, qStreamConsumed, p.StreamID, n, micros(p.Now)); err != nil {
				return tx.wrap(err, "%s: count consumed events", what)
			}
			run, err := tx.DagRunGetByID(ctx, p.DagRunID)
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			if err := tx.insertTIs(ctx, run, p.Instances, p.Now); err != nil {
				return err
			}
		}
		if p.Close {
			if _, err := tx.tx.ExecContext(ctx, qTIDelete, placeholder); err != nil {
				return tx.wrap(err, "%s: remove the placeholder", what)
			}
		}
		return nil
	})
}
