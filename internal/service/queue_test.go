package service_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

// scheduleAll triggers run runID of dagID and moves all its instances to
// scheduled.
func scheduleAll(t *testing.T, st store.Store, svc *service.Service, dagID, runID string) {
	t.Helper()
	ctx := context.Background()
	run, err := svc.TriggerRun(ctx, core.System, runs.TriggerParams{DagID: dagID, RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ti := range listTIs(t, st, run.ID) {
		ids = append(ids, ti.ID)
	}
	if _, err := st.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: ids, To: core.TIScheduled, Now: t0}); err != nil {
		t.Fatal(err)
	}
}

// The paged queueing pass, which leaves full DAGs and pools out of the
// pages it reads next, queues exactly what the rule read row by row over
// every scheduled instance in queueing order would: random DAGs, pools
// (one missing), slots and priorities.
//
// With fresh instances (a try's end's successors, still in state none,
// read with the scheduled ones and queued straight from none) the pass
// queues what the rule would over both in queueing order.
func TestQueueingMatchesTheRowByRowRule(t *testing.T) {
	t.Parallel()
	for seed := range int64(16) {
		withFresh := seed >= 8
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewSource(seed)) //nolint:gosec // a reproducible test input
			ctx := context.Background()
			st := sqlitetest.Open(t)
			svc := newSvc(st, clocktest.New(t0))
			slots := map[string]int{core.DefaultPool: service.DefaultPoolSlots}
			for _, p := range []string{"p1", "p2", "p3"} {
				slots[p] = 1 + rng.Intn(20)
				if _, err := svc.SavePool(ctx, core.System, service.PoolChange{Name: p, Slots: ptr(slots[p])}); err != nil {
					t.Fatal(err)
				}
			}
			pools := []string{core.DefaultPool, "p1", "p2", "p3", "missing"}
			limits := map[string]int{}
			for d := range 5 {
				spec := core.DAG{DagID: fmt.Sprintf("d%d", d), MaxActiveTasks: rng.Intn(30)}
				limits[spec.DagID] = cmp.Or(spec.MaxActiveTasks, service.DefaultMaxActiveTasks)
				for i := range 10 + rng.Intn(60) {
					spec.Tasks = append(spec.Tasks, core.Task{TaskID: fmt.Sprintf("t%d", i), Operator: "noop",
						Pool: pools[rng.Intn(len(pools))], PoolSlots: 1 + rng.Intn(3), PriorityWeight: rng.Intn(4)})
				}
				syncDAG(t, st, spec)
				for r := range 1 + rng.Intn(2) {
					scheduleAll(t, st, svc, spec.DagID, fmt.Sprintf("r%d", r))
				}
			}
			all, err := st.TaskInstanceList(ctx, &store.TaskInstanceListParams{States: []core.TIState{core.TIScheduled},
				OrderByPriority: true, Page: store.Page{Limit: 100000}})
			if err != nil {
				t.Fatal(err)
			}
			var fresh []core.TaskInstance
			if withFresh { // a random few back to none, as an end's successors
				for i := range all {
					if rng.Intn(8) == 0 {
						fresh = append(fresh, all[i])
					}
				}
				ids := make([]string, len(fresh))
				for i := range fresh {
					ids[i], fresh[i].State = fresh[i].ID, core.TINone
				}
				if _, err := st.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: ids, To: core.TINone, Now: t0}); err != nil {
					t.Fatal(err)
				}
			}
			used, byDag := map[string]int{}, map[string]int{}
			var want []string
			for _, ti := range all {
				total, ok := slots[ti.Pool]
				need := max(ti.PoolSlots, 1)
				if !ok || used[ti.Pool]+need > total || byDag[ti.DagID] >= limits[ti.DagID] {
					continue
				}
				used[ti.Pool] += need
				byDag[ti.DagID]++
				want = append(want, ti.ID)
			}
			var res service.QueueResult
			if withFresh {
				res, err = svc.QueueWithFresh(ctx, fresh)
			} else {
				res, err = svc.QueueScheduled(ctx, service.QueueParams{})
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Left[core.DefaultQueue] != len(want) || len(res.Found) != 0 { // no worker claimed any
				t.Errorf("backlog found %v, left %v after queueing %d", res.Found, res.Left, len(want))
			}
			queued, err := st.TaskInstanceList(ctx, &store.TaskInstanceListParams{States: []core.TIState{core.TIQueued},
				Page: store.Page{Limit: 100000}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ti := range queued {
				got = append(got, ti.ID)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("queued %d of %d scheduled (%d of them fresh), the row-by-row rule %d", len(got), len(all), len(fresh), len(want))
			}
		})
	}
}

// readCounter counts the scheduled rows a queueing pass reads.
type readCounter struct {
	store.Store
	rows *int
}

func (c readCounter) WithQueueLock(ctx context.Context, fn func(tx store.Store) error) error {
	return c.Store.WithQueueLock(ctx, func(tx store.Store) error { return fn(readCounter{tx, c.rows}) })
}

func (c readCounter) TaskInstanceList(ctx context.Context, p *store.TaskInstanceListParams) ([]core.TaskInstance, error) {
	tis, err := c.Store.TaskInstanceList(ctx, p)
	*c.rows += len(tis)
	return tis, err
}

func (c readCounter) QueueingReads(ctx context.Context, withPools bool, first *store.TaskInstanceListParams) ([]core.Pool, *store.ActiveCounts, []core.TaskInstance, error) {
	pools, active, tis, err := c.Store.QueueingReads(ctx, withPools, first)
	*c.rows += len(tis)
	return pools, active, tis, err
}

// A backlog behind a full pool costs a queueing pass one short page, not
// every waiting row (the pass runs at every try end that queues).
func TestQueueingReadsLittleOfABacklogBehindAFullPool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	rows := 0
	svc := service.New(service.Config{Store: readCounter{st, &rows}, Clock: clocktest.New(t0)})
	if _, err := svc.SavePool(ctx, core.System, service.PoolChange{Name: "one", Slots: ptr(1)}); err != nil {
		t.Fatal(err)
	}
	syncDAG(t, st, core.DAG{DagID: "hog", Tasks: []core.Task{{TaskID: "h", Operator: "noop", Pool: "one"}}})
	hog, err := svc.TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "hog"})
	if err != nil {
		t.Fatal(err)
	}
	startTry(t, st, hog, "h")
	wide := core.DAG{DagID: "wide", MaxActiveTasks: 1000}
	for i := range 300 {
		wide.Tasks = append(wide.Tasks, core.Task{TaskID: fmt.Sprintf("t%d", i), Operator: "noop", Pool: "one"})
	}
	syncDAG(t, st, wide)
	scheduleAll(t, st, svc, "wide", "r1")
	rows = 0
	res, err := svc.QueueScheduled(ctx, service.QueueParams{})
	if err != nil || res.Queued != 0 || len(res.Left) != 0 {
		t.Fatalf("queued %d, backlog %v (err %v), want none: the pool is full, its one try running", res.Queued, res.Left, err)
	}
	if rows > 16 {
		t.Errorf("the pass read %d scheduled rows behind a full pool, want one short page", rows)
	}
}
