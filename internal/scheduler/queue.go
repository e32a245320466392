package scheduler

import (
	"context"
	"fmt"
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
// operator can fix (while every pool is full nothing is read, so the error
// comes with the next pass that has free slots). default_pool has
// DefaultPoolSlots when no row defines it.
//
// Several schedulers queue one at a time (store.WithQueueLock), so the
// limits computed here hold across them.
//
// A whole pass reads the pools and keeps them for the light passes that
// follow (a pool's change or removal wakes a whole pass, as the pause
// flags' do).
func (s *Scheduler) queueScheduled(ctx context.Context, now time.Time, full bool) error {
	before := s.tally.queued
	err := s.Store.WithQueueLock(ctx, func(st store.Store) error {
		if full || s.pools == nil {
			pools, err := st.PoolList(ctx, &store.PoolListParams{})
			if err != nil {
				return fmt.Errorf("list pools: %w", err)
			}
			s.pools = pools
		}
		return s.queueLocked(ctx, st, now)
	})
	if err != nil {
		s.tally.queued = before // rolled back: nothing was queued
	}
	return err
}

// queueLocked is queueScheduled's work, reading and writing through st.
func (s *Scheduler) queueLocked(ctx context.Context, st store.Store, now time.Time) error {
	slots := map[string]int{core.DefaultPool: DefaultPoolSlots}
	for _, p := range s.pools {
		slots[p.Name] = p.Slots
	}
	active, err := st.TaskInstanceActiveCounts(ctx)
	if err != nil {
		return fmt.Errorf("count active task instances: %w", err)
	}
	// Scheduled instances are read in queueing order a page at a time, and
	// reading stops once every pool is full: a pass costs in proportion to
	// what it can queue, not to everything that waits (a run of 1,000
	// independent tasks used to read all of them on every pass).
	var ids []string
	warned := map[string]bool{}
	for offset, page := 0, 0; ; offset += page {
		free := freeSlots(slots, active.PoolSlots)
		if free == 0 {
			break
		}
		page = min(max(free, minQueuePage), maxQueuePage)
		tis, err := st.TaskInstanceList(ctx, &store.TaskInstanceListParams{
			DagID: s.Config.OnlyDagID, States: []core.TIState{core.TIScheduled}, OrderByPriority: true,
			Page: store.Page{Limit: page, Offset: offset},
		})
		if err != nil {
			return fmt.Errorf("list scheduled task instances: %w", err)
		}
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
		if len(tis) < page {
			break
		}
	}
	if len(ids) == 0 {
		return nil
	}
	moved, err := st.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{
		IDs: ids, From: []core.TIState{core.TIScheduled}, To: core.TIQueued, Now: now,
	})
	if err != nil {
		return fmt.Errorf("queue %d task instances: %w", len(ids), err)
	}
	if len(moved) == 0 {
		return nil
	}
	s.tally.queued += len(moved)
	if err := st.Notify(ctx, store.ChannelQueued); err != nil {
		return fmt.Errorf("notify workers: %w", err)
	}
	return nil
}

// Bounds of how many scheduled instances queueScheduled reads at a time:
// as many as there are free slots, within these.
const (
	minQueuePage = 16
	maxQueuePage = 256
)

// freeSlots returns how many slots the known pools have free in all.
func freeSlots(slots, used map[string]int) int {
	free := 0
	for name, total := range slots {
		free += max(total-used[name], 0)
	}
	return free
}
