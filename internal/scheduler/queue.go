package scheduler

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// queueScheduled moves scheduled instances to queued, highest priority
// weight first (then older runs, then map index), while their pool has free
// slots and their DAG has fewer than max_active_tasks queued or running
// instances across its runs; then it wakes the workers.
//
// An instance whose pool does not exist (or needs more slots than the pool
// has) stays scheduled and an error is logged, as in Airflow: creating or
// resizing the pool lets it run, and nothing is failed by a typo that an
// operator can fix. default_pool has DefaultPoolSlots when no row defines it.
func (s *Scheduler) queueScheduled(ctx context.Context, now time.Time) error {
	tis, err := s.Store.TaskInstanceList(ctx, &store.TaskInstanceListParams{States: []core.TIState{core.TIScheduled}})
	if err != nil {
		return fmt.Errorf("list scheduled task instances: %w", err)
	}
	if len(tis) == 0 {
		return nil
	}
	pools, err := s.Store.PoolList(ctx)
	if err != nil {
		return fmt.Errorf("list pools: %w", err)
	}
	slots := map[string]int{core.DefaultPool: DefaultPoolSlots}
	for _, p := range pools {
		slots[p.Name] = p.Slots
	}
	active, err := s.Store.TaskInstanceActiveCounts(ctx)
	if err != nil {
		return fmt.Errorf("count active task instances: %w", err)
	}
	sort.SliceStable(tis, func(i, j int) bool {
		a, b := &tis[i], &tis[j]
		if a.PriorityWeight != b.PriorityWeight {
			return a.PriorityWeight > b.PriorityWeight
		}
		if a.DagRunID != b.DagRunID {
			return a.DagRunID < b.DagRunID
		}
		return a.MapIndex < b.MapIndex
	})
	ids := make([]string, 0, len(tis))
	warned := map[string]bool{}
	for i := range tis {
		ti := &tis[i]
		total, ok := slots[ti.Pool]
		need := max(ti.PoolSlots, 1)
		if !ok || need > total {
			if !warned[ti.Pool] {
				warned[ti.Pool] = true
				s.Logger.Error("task instance waits for a pool that does not exist or is too small",
					"dag_id", ti.DagID, "run_id", ti.RunID, "task_id", ti.TaskID, "map_index", ti.MapIndex,
					"pool", ti.Pool, "pool_slots", need, "slots", total)
			}
			continue
		}
		if active.PoolSlots[ti.Pool]+need > total {
			continue
		}
		g, err := s.graph(ctx, ti.DagVersionID)
		if err != nil {
			return err
		}
		if active.ByDag[ti.DagID] >= orDefault(g.spec.MaxActiveTasks, DefaultMaxActiveTasks) {
			continue
		}
		active.PoolSlots[ti.Pool] += need
		active.ByDag[ti.DagID]++
		ids = append(ids, ti.ID)
	}
	if len(ids) == 0 {
		return nil
	}
	moved, err := s.Store.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{
		IDs: ids, From: []core.TIState{core.TIScheduled}, To: core.TIQueued, Now: now,
	})
	if err != nil {
		return fmt.Errorf("queue %d task instances: %w", len(ids), err)
	}
	if len(moved) == 0 {
		return nil
	}
	if err := s.Store.Notify(ctx, store.ChannelQueued); err != nil {
		return fmt.Errorf("notify workers: %w", err)
	}
	return nil
}
