package scheduler

import (
	"context"
	"fmt"
	"time"

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

// partitionScan is how many queued events of partitioned DAGs one pass
// looks at; a longer queue is worked through over several passes.
const partitionScan = 1000

// createPartitionRuns creates one run for every group of queued events of
// a partitioned DAG (one partition key, or one event) that meets the DAG's
// schedule, oldest first, consuming the group in the run's transaction;
// the run carries the group's partition key. At most
// MaxRunsToCreatePerLoop runs are made per pass; the rest wait for the
// next pass, which follows at once.
func (s *Scheduler) createPartitionRuns(ctx context.Context, now time.Time, res *passResult) error {
	ready, err := s.Store.AssetPartitionReady(ctx, partitionScan)
	if err != nil {
		return fmt.Errorf("find partitioned dags with queued asset events: %w", err)
	}
	budget := s.Config.MaxRunsToCreatePerLoop
	for i := range ready {
		if budget == 0 {
			res.again = true
			return nil
		}
		g := &ready[i]
		var key *string
		if g.PartitionKey != "" {
			key = &g.PartitionKey
		}
		p := runs.TriggerParams{DagID: g.DagID, RunType: core.RunAssetTriggered, PartitionKey: key,
			RunID: runs.EventRunID(core.RunAssetTriggered, now, g.EventID), LogicalDate: &now}
		var events []core.AssetEvent
		run, err := s.Service.TriggerRunWith(ctx, core.System, p, func(tx store.Store, run *core.DagRun) error {
			var err error
			events, err = tx.AssetPartitionConsume(ctx, g, run.ID)
			return err
		})
		switch {
		case benign(err):
			continue
		case err != nil:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.Logger.Error("create asset-triggered run", "dag_id", g.DagID, "partition_key", g.PartitionKey, "err", err)
			continue
		}
		budget--
		s.Logger.Info("created asset-triggered dag run", "dag_id", g.DagID, "run_id", run.RunID,
			"partition_key", g.PartitionKey, "events", len(events))
	}
	return nil
}
