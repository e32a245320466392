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
		var events []core.AssetEvent
		run, err := s.Service.TriggerRunWith(ctx, core.System, runs.TriggerParams{DagID: dagID, RunType: core.RunAssetTriggered},
			func(tx store.Store, run *core.DagRun) error {
				var err error
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
