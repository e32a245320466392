package service

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// Queueing limits left unset.
const (
	// DefaultPoolSlots is the size of default_pool when no row defines it.
	DefaultPoolSlots = 128
	// DefaultMaxActiveTasks is a DAG's max_active_tasks when it sets none.
	DefaultMaxActiveTasks = 16
)

// QueueParams says what QueueScheduled works with.
type QueueParams struct {
	// Pools are the pools to queue within; nil = read them under the lock
	// (a scheduler keeps them between its passes: a pool's change wakes a
	// whole pass, which reads them again).
	Pools []core.Pool
}

// QueueResult is what QueueScheduled did.
type QueueResult struct {
	Queued int
	IDs    []string    // the instances it queued
	Pools  []core.Pool // the pools it queued within
	// Found and Left are the workers' backlogs, per queue: the queued
	// instances no worker had claimed when it began, and once it was done
	// (those it queued included).
	Found, Left map[string]int
}

// QueueScheduled moves scheduled instances to queued, highest priority
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
// Schedulers and try ends (followOn) queue one at a time
// (store.WithQueueLock), so the limits computed here hold across them.
// With Config.OnlyDagID, only that DAG's instances are queued. They are
// dated under the lock: a try's end that scheduled one committed before,
// and nothing that follows an end is dated before it.
func (s *Service) QueueScheduled(ctx context.Context, p QueueParams) (QueueResult, error) {
	var res QueueResult
	err := s.st.WithQueueLock(ctx, func(tx store.Store) error {
		q, err := s.readQueueing(ctx, tx, p.Pools, nil)
		if err != nil {
			return err
		}
		if res, err = s.queueLocked(ctx, tx, q, false, nil); err != nil || res.Queued == 0 {
			return err
		}
		return notifyQueued(ctx, tx)
	})
	if err != nil {
		return QueueResult{}, err
	}
	s.queued(QueuedByScheduler, res.Queued)
	return res, nil
}

// Who queued task instances (Config.OnQueued).
const (
	QueuedByScheduler = "scheduler" // QueueScheduled: a scheduler's pass
	QueuedByTryEnd    = "try_end"   // a try's success, queueing what follows it
)

// queued tells Config.OnQueued of n committed queueings by by.
func (s *Service) queued(by string, n int) {
	if s.onQueued != nil && n > 0 {
		s.onQueued(by, n)
	}
}

// queueing is what a queueing pass reads first, under the queueing lock.
type queueing struct {
	locked bool // false: another process holds the lock, and nothing is to be queued
	pools  []core.Pool
	active *store.ActiveCounts
	first  []core.TaskInstance // the first page of scheduled instances, in queueing order
}

// readQueueing reads, in one statement, the slots in use and the first
// page of scheduled instances, and the pools unless given. tx holds the
// queueing lock, or, with held (TryQueueLock's), has asked for it: the
// reads go with the lock's statement, and when held says no, they are not
// to be used (locked false).
func (s *Service) readQueueing(ctx context.Context, tx store.Store, pools []core.Pool, held func() (bool, error)) (queueing, error) {
	read, active, first, err := tx.QueueingReads(ctx, pools == nil, s.scheduledPage(minQueuePage, 0, exclusions{}))
	if err != nil {
		return queueing{}, fmt.Errorf("read the slots in use: %w", err)
	}
	if held != nil {
		if locked, err := held(); err != nil || !locked {
			return queueing{}, err
		}
	}
	if pools == nil {
		pools = read
	}
	return queueing{locked: true, pools: pools, active: active, first: first}, nil
}

// scheduledPage is the page of scheduled instances a queueing pass reads,
// in queueing order, without those except leaves out.
func (s *Service) scheduledPage(limit, offset int, except exclusions) *store.TaskInstanceListParams {
	return &store.TaskInstanceListParams{DagID: s.onlyDagID, States: []core.TIState{core.TIScheduled},
		ExceptDagIDs: except.dags, ExceptPools: except.pools, OrderByPriority: true,
		Page: store.Page{Limit: limit, Offset: offset}}
}

// queueLocked is QueueScheduled's work in tx, from what q read (nothing
// when q is not locked). What it queues is dated now, once
// the lock is held. The caller wakes the workers (notifyQueued) for what
// it queued.
// With unread the queueing update is not read back (Unread: on PostgreSQL
// it goes with the transaction's next statement) and every instance it
// picked counts as queued; one that another process moved out of
// scheduled since the read (a clear, a mark) is then counted but stays
// where it is.
//
// fresh are instances a try's end is about to schedule, still in state
// none (sorted here in queueing order, queueOrder): they are queued with
// the scheduled ones, in their place in the order, and go none → queued in
// one update; the caller schedules those left (followOn).
func (s *Service) queueLocked(ctx context.Context, tx store.Store, q queueing, unread bool, fresh []core.TaskInstance) (res QueueResult, err error) {
	if !q.locked {
		return QueueResult{}, nil
	}
	pools, active, first := q.pools, q.active, q.first
	now := s.clock.Now()
	res = QueueResult{Pools: pools, Found: active.Claimable, Left: maps.Clone(active.Claimable)}
	slots := map[string]int{core.DefaultPool: DefaultPoolSlots}
	for _, p := range pools {
		slots[p.Name] = p.Slots
	}
	// Scheduled instances are read in queueing order a page at a time, and
	// reading stops once every pool is full: a pass costs in proportion to
	// what it can queue, not to everything that waits. A DAG found at its
	// max_active_tasks and a pool found full (or missing) are left out of
	// the pages that follow, so a backlog of one DAG's 1,000 instances costs
	// one short page, not 1,000 rows.
	var (
		ids         []string
		seen        []*core.TaskInstance // every scheduled instance read, in order
		except      exclusions
		warnedAbout = map[string]bool{}
		free        = freeSlots(slots, active.PoolSlots)
		queueOf     = map[string]string{}
		freshIDs    = make(map[string]bool, len(fresh))
	)
	slices.SortFunc(fresh, func(a, b core.TaskInstance) int { return queueOrder(&a, &b) })
	for i := range fresh {
		freshIDs[fresh[i].ID] = true
	}
	// consider queues ti when its pool and its DAG have room.
	consider := func(ti *core.TaskInstance) error {
		queueOf[ti.ID] = ti.Queue
		total, ok := slots[ti.Pool]
		need := max(ti.PoolSlots, 1)
		if !ok || need > total {
			if !warnedAbout[ti.Pool] {
				warnedAbout[ti.Pool] = true
				s.log.Error("task instance waits for a pool that does not exist or is too small",
					"dag_id", ti.DagID, "run_id", ti.RunID, "task_id", ti.TaskID, "map_index", ti.MapIndex,
					"pool", ti.Pool, "pool_slots", need, "slots", total)
			}
			if !ok {
				except.pools = appendNew(except.pools, ti.Pool)
			}
			return nil
		}
		if except.has(ti) {
			return nil
		}
		if active.PoolSlots[ti.Pool]+need > total {
			if active.PoolSlots[ti.Pool] >= total {
				except.pools = appendNew(except.pools, ti.Pool)
			}
			return nil
		}
		v, err := s.DagVersion(ctx, ti.DagVersionID)
		if err != nil {
			return err
		}
		limit := cmp.Or(v.Spec.MaxActiveTasks, DefaultMaxActiveTasks)
		if active.ByDag[ti.DagID] >= limit {
			except.dags = appendNew(except.dags, ti.DagID)
			return nil
		}
		active.PoolSlots[ti.Pool] += need
		active.ByDag[ti.DagID]++
		free -= need
		ids = append(ids, ti.ID)
		if active.PoolSlots[ti.Pool] >= total {
			except.pools = appendNew(except.pools, ti.Pool)
		}
		if active.ByDag[ti.DagID] >= limit {
			except.dags = appendNew(except.dags, ti.DagID)
		}
		return nil
	}
	for page := minQueuePage; free > 0; page = min(2*page, maxQueuePage) {
		// The pages are one order filtered more as the pass learns; the
		// instances read so far that the filter keeps are its first ones.
		tis := first // read with the slots in use
		if page > minQueuePage {
			offset := 0
			for _, ti := range seen {
				if !except.has(ti) {
					offset++
				}
			}
			if tis, err = tx.TaskInstanceList(ctx, s.scheduledPage(page, offset, except)); err != nil {
				return res, fmt.Errorf("list scheduled task instances: %w", err)
			}
		}
		last := len(tis) < page
		for i := range tis {
			ti := &tis[i]
			seen = append(seen, ti)
			for len(fresh) > 0 && queueOrder(&fresh[0], ti) < 0 {
				if err := consider(&fresh[0]); err != nil {
					return res, err
				}
				fresh = fresh[1:]
			}
			if freshIDs[ti.ID] { // scheduled by another process since the end read it: considered as fresh
				continue
			}
			if err := consider(ti); err != nil {
				return res, err
			}
		}
		if last {
			for i := range fresh {
				if err := consider(&fresh[i]); err != nil {
					return res, err
				}
			}
			break
		}
	}
	if len(ids) == 0 {
		return res, nil
	}
	from := []core.TIState{core.TIScheduled}
	if len(freshIDs) > 0 {
		from = append(from, core.TINone)
	}
	moved, err := tx.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{
		IDs: ids, From: from, To: core.TIQueued, Now: now, Unread: unread,
	})
	if err != nil {
		return res, fmt.Errorf("queue %d task instances: %w", len(ids), err)
	}
	if unread {
		moved = ids
	}
	res.Queued, res.IDs = len(moved), moved
	for _, id := range moved {
		res.Left[queueOf[id]]++
	}
	return res, nil
}

// queueOrder is the queueing order of the store's OrderByPriority: highest
// priority weight first, then older runs, then map index and task id.
func queueOrder(a, b *core.TaskInstance) int {
	return cmp.Or(cmp.Compare(b.PriorityWeight, a.PriorityWeight), cmp.Compare(a.DagRunID, b.DagRunID),
		cmp.Compare(a.MapIndex, b.MapIndex), strings.Compare(a.TaskID, b.TaskID))
}

// notifyQueued wakes the workers' claims when tx commits.
func notifyQueued(ctx context.Context, tx store.Store) error {
	if err := tx.Notify(ctx, store.ChannelQueued); err != nil {
		return fmt.Errorf("notify workers: %w", err)
	}
	return nil
}

// Bounds of how many scheduled instances queueLocked reads at a time: as
// many as there are free slots, within these.
const (
	minQueuePage = 16
	maxQueuePage = 256
)

// exclusions are the DAGs and pools a queueing pass leaves out of the
// pages it reads next: a DAG at its max_active_tasks (as the first of its
// instances met found it), a full or missing pool.
type exclusions struct{ dags, pools []string }

func (e *exclusions) has(ti *core.TaskInstance) bool {
	return slices.Contains(e.dags, ti.DagID) || slices.Contains(e.pools, ti.Pool)
}

func appendNew(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

// freeSlots returns how many slots the known pools have free in all.
func freeSlots(slots, used map[string]int) int {
	free := 0
	for name, total := range slots {
		free += max(total-used[name], 0)
	}
	return free
}
