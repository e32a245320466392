package service

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// followOn carries out, in tx (the transaction that records the success of
// done), what that success decides on its own (runs.DecideFollowOn): the
// free slots are filled as the scheduler's queueing would fill them
// (queueLocked), its downstream instances whose trigger rule now says run
// among the scheduled ones (queued straight from none), so that a chain's
// next task is queued with the end of the one before (the caller wakes the
// workers: the reporting worker may take it at once, FinishTry); those
// left are scheduled. It reports which instances it queued and whether the
// scheduler has nothing left to do for this end; when it has — something
// DecideFollowOn leaves to it, or nothing was scheduled (a slot this end
// freed is filled by the scheduler's next pass, with the other ends of that
// pass) — the caller wakes it.
//
// Nothing is scheduled for a run that is not running or a paused DAG's
// (the scheduler does not decide those either), and the queueing is left to
// the scheduler when another process holds the queueing lock (TryQueueLock:
// a try's end never waits for it).
//
// What it schedules is dated after the reads that decided it, and what it
// queues after it holds the queueing lock: an end that committed before
// them may have read the clock after this end did, and nothing that
// follows an end is dated before it.
func (s *Service) followOn(ctx context.Context, tx store.Store, spec *core.DAG, done *core.TaskInstance) (followed, error) {
	var out followed
	if s.onlyDagID != "" && done.DagID != s.onlyDagID {
		return out, nil
	}
	down, counted := runs.FollowOnReads(spec, done)
	read := tx.DagRunGetPausedWithTasks(ctx, done.DagRunID, down)
	// When the downstream instances and their run alone decide (no
	// upstream counts: a chain's next task), the queueing lock and its
	// reads are asked for before the decision is known, so that on
	// PostgreSQL they go in one round trip with the downstream read (and
	// the end's update). The lock is then held to the commit even when
	// nothing is queued; a scheduler's pass waits for it that long.
	var q queueing
	early := len(counted) == 0 && len(down) > 0
	if early {
		var err error
		if q, err = s.lockAndReadQueueing(ctx, tx); err != nil {
			return out, err
		}
	}
	f, rt, err := s.decideFollowOn(ctx, tx, spec, done, read, counted)
	if err != nil || len(f.Schedule) == 0 {
		// Nothing follows at once: a slot this end freed is the
		// scheduler's to fill, with the other ends of its pass.
		return out, err
	}
	// As the scheduler requires before it decides a run: the run is
	// running and its DAG not paused (or the only DAG this process runs).
	if rt.Run.State != core.RunRunning || rt.Paused && s.onlyDagID != done.DagID {
		return out, nil
	}
	out.run = rt.Run
	if !early {
		if q, err = s.lockAndReadQueueing(ctx, tx); err != nil {
			return out, err
		}
	}
	// The queueing reads ran under the lock (its statement went first in
	// their batch), so what other ends committed and scheduled before
	// them is queued too; the instances this end schedules are queued
	// with them, in their place in the order, none → queued in one update
	// rather than two. Its update goes with the end's next statement (the
	// claim of the next try, or the commit).
	decided := make(map[string]bool, len(f.Schedule))
	for _, id := range f.Schedule {
		decided[id] = true
	}
	fresh := make([]core.TaskInstance, 0, len(f.Schedule))
	for _, ti := range rt.Tasks {
		if decided[ti.ID] {
			fresh = append(fresh, ti)
		}
	}
	res, err := s.queueLocked(ctx, tx, q, true, fresh)
	if err != nil {
		return out, err
	}
	// Those left (no room, or another process holds the queueing lock)
	// are scheduled, dated after the reads that decided them; the update
	// goes with the next statement too. One another process scheduled or
	// moved elsewhere first stays where it is.
	for _, id := range res.IDs {
		delete(decided, id)
	}
	if rest := slices.Sorted(maps.Keys(decided)); len(rest) > 0 {
		if _, err := tx.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{
			IDs: rest, From: []core.TIState{core.TINone}, To: core.TIScheduled, Now: s.clock.Now(), Unread: true}); err != nil {
			return out, fmt.Errorf("schedule %d downstream task instances: %w", len(rest), err)
		}
	}
	if !q.locked {
		return out, nil
	}
	out.settled, out.queued = !f.NeedsScheduler, res.IDs
	return out, nil
}

// lockAndReadQueueing tries the queueing lock in tx and reads what a
// queueing pass reads first under it (readQueueing), in one round trip
// with what waits to be sent.
func (s *Service) lockAndReadQueueing(ctx context.Context, tx store.Store) (queueing, error) {
	held, err := tx.TryQueueLock(ctx)
	if err != nil {
		return queueing{}, err
	}
	return s.readQueueing(ctx, tx, nil, held)
}

// followed is what followOn did.
type followed struct {
	settled bool         // the scheduler has nothing left to do for this end
	queued  []string     // the instances it queued
	run     *core.DagRun // the try's run, when it read it
}

// decideFollowOn decides what follows done from its run and downstream
// instances (read, DagRunGetPausedWithTasks's) and the counts of the
// upstream instances counted names, which it reads first: on PostgreSQL
// their statement carries the downstream read, in order after it.
func (s *Service) decideFollowOn(ctx context.Context, tx store.Store, spec *core.DAG, done *core.TaskInstance,
	read func() (store.RunWithTasks, error), counted []string) (runs.FollowOn, store.RunWithTasks, error) {
	counts := map[string]map[core.TIState]int{}
	if len(counted) > 0 {
		groups, err := tx.TaskInstanceStateCounts(ctx, []int64{done.DagRunID}, counted...)
		if err != nil {
			return runs.FollowOn{}, store.RunWithTasks{}, fmt.Errorf("count the upstream task instances: %w", err)
		}
		for _, g := range groups {
			if counts[g.TaskID] == nil {
				counts[g.TaskID] = map[core.TIState]int{}
			}
			counts[g.TaskID][g.State] += g.Count
		}
	}
	rt, err := read()
	if err != nil {
		return runs.FollowOn{}, rt, fmt.Errorf("read the downstream task instances: %w", err)
	}
	return runs.DecideFollowOn(spec, done, rt.Tasks, counts), rt, nil
}
