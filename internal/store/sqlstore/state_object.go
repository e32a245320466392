package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// The state_object queries (docs/state-backends.md#sweeping); the rows of
// removed references are written by the triggers of migration 00015.
const (
	qStateObjectReserve = `INSERT INTO state_object (ref, reserved, due_at) VALUES ($1, TRUE, $2)`
	// qStateObjectConsume takes a reservation no sweeper has claimed.
	qStateObjectConsume = `DELETE FROM state_object WHERE ref = $1 AND reserved AND claimed_until = 0`
	// qStateObjectClaim leases up to $3 due references until $1.
	qStateObjectClaim = `WITH picked AS MATERIALIZED (
			SELECT ref FROM state_object WHERE due_at <= $2 AND claimed_until < $2
			ORDER BY due_at, ref LIMIT $3 %s)
		UPDATE state_object SET claimed_until = $1 WHERE ref IN (SELECT ref FROM picked) RETURNING ref`
	qStateObjectDone    = `DELETE FROM state_object WHERE ref = $1`
	qStateObjectPending = `SELECT count(*) FROM state_object`
)

// StateObjectReserve records ref as issued, due for the sweep at due.
func (s *Store) StateObjectReserve(ctx context.Context, ref string, due time.Time) error {
	_, err := s.writer().ExecContext(ctx, qStateObjectReserve, ref, micros(due))
	return s.wrap(err, "reserve state object %s", ref)
}

// consumeStateObject takes ref's reservation in tx's transaction.
func (s *Store) consumeStateObject(ctx context.Context, ref string) error {
	res, err := s.writer().ExecContext(ctx, qStateObjectConsume, ref)
	if err != nil {
		return s.wrap(err, "consume the reservation of state object %s", ref)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("state object %s is not reserved for this write (its reservation expired and it is being swept; write the value again): %w",
			ref, core.ErrConflict)
	}
	return nil
}

// StateObjectClaim leases up to p.Limit due references.
func (s *Store) StateObjectClaim(ctx context.Context, p *store.StateObjectClaimParams) ([]string, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	rows, err := s.writer().QueryContext(ctx, fmt.Sprintf(qStateObjectClaim, s.d.ClaimLock),
		micros(p.Now.Add(p.Lease)), micros(p.Now), p.Limit)
	if err != nil {
		return nil, s.wrap(err, "claim state objects")
	}
	refs, err := collect(rows, scanString)
	return refs, s.wrap(err, "claim state objects")
}

// StateObjectDone forgets swept references, in one transaction.
func (s *Store) StateObjectDone(ctx context.Context, refs []string) error {
	return s.inTx(ctx, func(tx *Store) error {
		for _, ref := range refs {
			if _, err := tx.tx.ExecContext(ctx, qStateObjectDone, ref); err != nil {
				return tx.wrap(err, "forget swept state object %s", ref)
			}
		}
		return nil
	})
}

// StateObjectPending counts references not yet swept.
func (s *Store) StateObjectPending(ctx context.Context) (int, error) {
	var n int
	err := s.reader().QueryRowContext(ctx, qStateObjectPending).Scan(&n)
	return n, s.wrap(err, "count state objects")
}
