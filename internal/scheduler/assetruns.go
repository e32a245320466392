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
// neither. A DAG whose queue another scheduler consumed first is skipped,
// and so is one whose schedule DecideTriggers says no asset-triggered run
// of (dags are the pass's active DAGs).
func (s *Scheduler) createAssetRuns(ctx context.Context, dags []core.DagModel) error {
	ready, err := s.Store.AssetQueueReady(ctx)
	if err != nil {
		return fmt.Errorf("find dags with queued asset events: %w", err)
	}
	byID := dagsByID(dags)
	for _, dagID := range ready {
		if !s.assetTriggered(ctx, byID, dagID) {
			continue
		}
		p := runs.TriggerParams{DagID: dagID, RunType: core.RunAssetTriggered}
		if _, err := s.assetRun(ctx, p, func(tx store.Store, run *core.DagRun) ([]core.AssetEvent, error) {
			return tx.AssetQueueConsume(ctx, dagID, run.ID)
		}); err != nil {
			return err
		}
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
// next pass, which follows at once. As in createAssetRuns, a DAG gets runs
// only when DecideTriggers says its schedule makes them.
func (s *Scheduler) createPartitionRuns(ctx context.Context, dags []core.DagModel, now time.Time, res *passResult) error {
	ready, err := s.Store.AssetPartitionReady(ctx, partitionScan)
	if err != nil {
		return fmt.Errorf("find partitioned dags with queued asset events: %w", err)
	}
	byID := dagsByID(dags)
	budget := s.Config.MaxRunsToCreatePerLoop
	for i := range ready {
		if budget == 0 {
			res.again = true
			return nil
		}
		g := &ready[i]
		if !s.assetTriggered(ctx, byID, g.DagID) {
			continue
		}
		p := runs.TriggerParams{DagID: g.DagID, RunType: core.RunAssetTriggered,
			RunID: runs.EventRunID(core.RunAssetTriggered, now, g.EventID), LogicalDate: &now}
		if g.PartitionKey != "" {
			p.PartitionKey = &g.PartitionKey
		}
		created, err := s.assetRun(ctx, p, func(tx store.Store, run *core.DagRun) ([]core.AssetEvent, error) {
			return tx.AssetPartitionConsume(ctx, g, run.ID)
		})
		if err != nil {
			return err
		}
		if created {
			budget--
		}
	}
	return nil
}

// assetRun creates an asset-triggered run whose transaction consumes its
// events with consume, and logs it. A conflict (another scheduler took the
// events) or a failure of this one run is logged and skipped (false, nil);
// only the end of ctx is returned.
func (s *Scheduler) assetRun(ctx context.Context, p runs.TriggerParams,
	consume func(tx store.Store, run *core.DagRun) ([]core.AssetEvent, error)) (bool, error) {
	var events []core.AssetEvent
	run, err := s.Service.TriggerRunWith(ctx, core.System, p, func(tx store.Store, run *core.DagRun) error {
		var err error
		events, err = consume(tx, run)
		return err
	})
	partition := ""
	if p.PartitionKey != nil {
		partition = *p.PartitionKey
	}
	switch {
	case benign(err):
		return false, nil
	case err != nil:
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		s.Logger.Error("create asset-triggered run", "dag_id", p.DagID, "partition_key", partition, "err", err)
		return false, nil
	}
	s.tally.runsCreated++
	s.Logger.Info("created asset-triggered dag run", "dag_id", p.DagID, "run_id", run.RunID,
		"partition_key", partition, "events", len(events))
	return true, nil
}

func dagsByID(dags []core.DagModel) map[string]*core.DagModel {
	out := make(map[string]*core.DagModel, len(dags))
	for i := range dags {
		out[dags[i].DagID] = &dags[i]
	}
	return out
}

// assetTriggered reports whether dagID, whose queued events meet its asset
// schedule, gets an asset-triggered run by DecideTriggers over its latest
// version; a DAG this pass did not list (it went inactive meanwhile) or
// whose version cannot be read gets none this pass.
func (s *Scheduler) assetTriggered(ctx context.Context, byID map[string]*core.DagModel, dagID string) bool {
	d, ok := byID[dagID]
	if !ok {
		return false
	}
	g, err := s.graph(ctx, d.LatestVersion)
	if err != nil {
		if ctx.Err() == nil { // stopping is no error; the pass ends at its next read
			s.Logger.Error("create asset-triggered run", "dag_id", dagID, "err", err)
		}
		return false
	}
	return DecideTriggers(g.spec, false, true).AssetTriggered
}
