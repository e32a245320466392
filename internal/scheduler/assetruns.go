package scheduler

import (
	"context"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// createAssetRuns creates one asset-triggered run for every active, unpaused
// DAG whose scheduled assets all have queued events (Airflow's
// schedule=[a, b]), consuming those events in the run's transaction: the
// run records the events it consumed, and a crash leaves either both or
// neither. A DAG whose queue another scheduler consumed first is skipped.
func (s *Scheduler) createAssetRuns(ctx context.Context) error {
	ready, err := s.Store.AssetQueueReady(ctx)
	if err != nil {
		return fmt.Errorf("find dags with queued asset events: %w", err)
	}
	for _, dagID := range ready {
		var (
			run    *core.DagRun
			events []core.AssetEvent
		)
		err := s.Store.WithTx(ctx, func(tx store.Store) error {
			var err error
			run, err = runs.Trigger(ctx, tx, s.Clock, runs.TriggerParams{DagID: dagID, RunType: core.RunAssetTriggered})
			if err != nil {
				return err
			}
			events, err = tx.AssetQueueConsume(ctx, dagID, run.ID)
			return err
		})
		switch {
		case benign(err):
			continue
		case err != nil:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.Logger.Error("create asset-triggered run", "dag_id", dagID, "err", err)
			continue
		}
		s.Logger.Info("created asset-triggered dag run", "dag_id", dagID, "run_id", run.RunID, "events", len(events))
	}
	return nil
}
