package service

import (
	"context"
	"fmt"

	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// SetDagPaused pauses or unpauses a DAG (a paused DAG gets no new runs and
// its runs do not advance) and wakes the scheduler, which starts or stops
// acting on it at once. Needs role op. Errors wrap core.ErrNotFound for an
// unknown DAG.
func (s *Service) SetDagPaused(ctx context.Context, actor core.Actor, dagID string, paused bool) (*core.DagModel, error) {
	c := &change{actor: actor, need: core.RoleOp, action: audit.DagUnpause, target: dagID,
		notify: []string{store.ChannelScheduler}}
	if paused {
		c.action = audit.DagPause
	}
	var out *core.DagModel
	err := s.do(ctx, c, func(tx store.Store, _ *string) error {
		if _, err := tx.DagGet(ctx, dagID); err != nil {
			return fmt.Errorf("dag_id %q: %w", dagID, err)
		}
		if err := tx.DagSetPaused(ctx, dagID, paused); err != nil {
			return fmt.Errorf("set is_paused of dag_id %q: %w", dagID, err)
		}
		var err error
		out, err = tx.DagGet(ctx, dagID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
