package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func testClaimOrderAndQueues(t *testing.T, f *fixture) {
	low, high, mid, gpu, idle := newTI("low", core.TIQueued), newTI("high", core.TIQueued), newTI("mid", core.TIQueued),
		newTI("gpu", core.TIQueued), newTI("idle", core.TINone)
	high.PriorityWeight, mid.PriorityWeight, gpu.PriorityWeight = 10, 5, 100
	gpu.Queue = "gpu"
	f.run("etl", "r1", low, high, mid, gpu, idle)

	got, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w1", Limit: 2, Now: f.at(time.Second)})
	must(t, err, "claim 2")
	if len(got) != 2 || got[0].TaskID != "high" || got[1].TaskID != "mid" {
		t.Fatalf("claimed %v, want [high mid] (priority order, default queue only)", taskIDs(got))
	}
	for _, ti := range got {
		if ti.WorkerID != "w1" || ti.State != core.TIQueued {
			t.Errorf("claimed %s: worker %q state %s, want w1 and still queued", ti.TaskID, ti.WorkerID, ti.State)
		}
	}
	got, err = f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w2",
		Queues: []string{"gpu", core.DefaultQueue}, Limit: 10, Now: f.at(time.Second)})
	must(t, err, "claim rest")
	if len(got) != 2 || got[0].TaskID != "gpu" || got[1].TaskID != "low" {
		t.Fatalf("claimed %v, want [gpu low] (already-claimed and non-queued skipped)", taskIDs(got))
	}
	got, err = f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w3", Limit: 10, Now: f.now})
	must(t, err, "claim empty")
	if len(got) != 0 {
		t.Errorf("claimed %v from an empty queue", taskIDs(got))
	}
	got, err = f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w3", Limit: 0, Now: f.now})
	if err != nil || len(got) != 0 {
		t.Errorf("limit 0: %v, %v; want nothing", got, err)
	}
}

func taskIDs(tis []core.TaskInstance) []string {
	var out []string
	for _, ti := range tis {
		out = append(out, ti.TaskID)
	}
	return out
}

func testClaimExclusiveConcurrent(t *testing.T, f *fixture) {
	const total, workers = 300, 8
	seed := make([]store.NewTaskInstance, total)
	for i := range seed {
		seed[i] = newTI(fmt.Sprintf("t%03d", i), core.TIQueued)
	}
	f.run("etl", "r1", seed...)

	var (
		mu    sync.Mutex
		owner = map[string]string{}
		dups  []string
		wg    sync.WaitGroup
		errs  = make(chan error, workers)
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker := fmt.Sprintf("w%d", w)
			for {
				got, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: worker, Limit: 7, Now: f.now})
				if err != nil {
					errs <- err
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, ti := range got {
					if prev, ok := owner[ti.ID]; ok {
						dups = append(dups, fmt.Sprintf("%s to %s and %s", ti.TaskID, prev, worker))
					}
					owner[ti.ID] = worker
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent claim: %v", err)
	}
	if len(dups) > 0 {
		t.Fatalf("task instances handed out twice: %v", dups)
	}
	if len(owner) != total {
		t.Errorf("%d task instances claimed, want all %d", len(owner), total)
	}
	left, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "late", Limit: total, Now: f.now})
	must(t, err, "claim after drain")
	if len(left) != 0 {
		t.Errorf("%d still claimable after drain", len(left))
	}
	for id, w := range owner {
		if got := f.get(id); got.WorkerID != w {
			t.Fatalf("%s stored worker %q, claim returned it to %q", id, got.WorkerID, w)
		}
	}
}

func testStartHeartbeatFinish(t *testing.T, f *fixture) {
	a, unclaimed := newTI("a", core.TIQueued), newTI("b", core.TIQueued)
	a.PriorityWeight = 1
	f.run("etl", "r1", a, unclaimed)
	_, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w1", Limit: 1, Now: f.now})
	must(t, err, "claim")

	_, err = f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: a.ID, WorkerID: "w2", Now: f.now})
	wantErr(t, err, core.ErrConflict, "start by another worker")
	_, err = f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: unclaimed.ID, WorkerID: "w1", Now: f.now})
	wantErr(t, err, core.ErrConflict, "start unclaimed")
	wantErr(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: a.ID, State: core.TISuccess, Now: f.now}),
		core.ErrConflict, "finish before start")
	wantErr(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: a.ID, State: core.TISuccess, Now: f.now, NoAliases: true}),
		core.ErrConflict, "finish before start (a task without alias outlets: no transaction)")
	wantErr(t, f.st.TaskInstanceHeartbeat(f.ctx, a.ID, f.now), core.ErrConflict, "heartbeat before start")

	ti, err := f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: a.ID, WorkerID: "w1", Hostname: "host1",
		PID: 99, Now: f.at(time.Second)})
	must(t, err, "start")
	if ti.State != core.TIRunning || ti.Hostname != "host1" || ti.PID != 99 || ti.StartDate == nil ||
		!ti.StartDate.Equal(f.at(time.Second)) || ti.LastHeartbeat == nil {
		t.Errorf("started = %+v, want running on host1 pid 99 started now+1s", ti)
	}
	_, err = f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: a.ID, WorkerID: "w1", Now: f.now})
	wantErr(t, err, core.ErrConflict, "start twice")

	must(t, f.st.TaskInstanceHeartbeat(f.ctx, a.ID, f.at(time.Minute)), "heartbeat")
	if got := f.get(a.ID); got.LastHeartbeat == nil || !got.LastHeartbeat.Equal(f.at(time.Minute)) {
		t.Errorf("heartbeat = %v, want now+1m", got.LastHeartbeat)
	}
	wantErr(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: a.ID, State: core.TIRunning, Now: f.now}),
		core.ErrInvalid, "finish as running")
	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: a.ID, State: core.TISuccess,
		Now: f.at(2 * time.Minute), NoAliases: true}), "finish")
	got := f.get(a.ID)
	if got.State != core.TISuccess || got.EndDate == nil || got.Duration() != 2*time.Minute-time.Second {
		t.Errorf("finished = state %s end %v duration %v", got.State, got.EndDate, got.Duration())
	}
	wantErr(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: a.ID, State: core.TIFailed, Now: f.now}),
		core.ErrConflict, "finish twice")
	wantErr(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: a.ID, State: core.TIFailed, Now: f.now, NoAliases: true}),
		core.ErrConflict, "finish twice (no aliases)")
	wantErr(t, f.st.TaskInstanceHeartbeat(f.ctx, a.ID, f.now), core.ErrConflict, "heartbeat after finish")
	wantErr(t, f.st.TaskInstanceHeartbeat(f.ctx, unknownID, f.now), core.ErrNotFound, "heartbeat unknown")
	_, err = f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: unknownID, WorkerID: "w1", Now: f.now})
	wantErr(t, err, core.ErrNotFound, "start unknown")
}

const unknownID = "00000000-0000-4000-8000-000000000000"

// testFinishLater: a deferred finish in a transaction applies with the
// statements after it (a read sees it) and check says so; one of a try
// not running is a conflict by check, which a rolled back transaction
// leaves unapplied; outside a transaction it is TaskInstanceFinish.
func testFinishLater(t *testing.T, f *fixture) {
	a, b, c := newTI("a", core.TIRunning), newTI("b", core.TIQueued), newTI("c", core.TIRunning)
	f.run("etl", "r1", a, b, c)
	finish := func(id string) *store.TaskInstanceFinishParams {
		return &store.TaskInstanceFinishParams{ID: id, State: core.TISuccess, Now: f.at(time.Minute), NoAliases: true}
	}
	must(t, f.st.WithTx(f.ctx, func(tx store.Store) error {
		check, err := tx.TaskInstanceFinishLater(f.ctx, finish(a.ID))
		if err != nil {
			return err
		}
		if got, err := tx.TaskInstanceGet(f.ctx, a.ID); err != nil || got.State != core.TISuccess {
			t.Errorf("read after the deferred finish: %v, %v; want it success", got, err)
		}
		return errors.Join(check(), check()) // checked twice: the same answer
	}), "finish later, then read")

	conflict := f.st.WithTx(f.ctx, func(tx store.Store) error {
		check, err := tx.TaskInstanceFinishLater(f.ctx, finish(b.ID))
		if err != nil {
			return err
		}
		return check() // nothing carried it: check sends it
	})
	wantErr(t, conflict, core.ErrConflict, "finish later a queued try")
	if !strings.Contains(fmt.Sprint(conflict), "it is queued, not running") {
		t.Errorf("conflict = %v, want the try's state named", conflict)
	}
	wantErr(t, f.st.WithTx(f.ctx, func(tx store.Store) error {
		_, err := tx.TaskInstanceFinishLater(f.ctx, &store.TaskInstanceFinishParams{ID: c.ID, State: core.TIQueued, Now: f.now})
		return err
	}), core.ErrInvalid, "finish later as queued")

	check, err := f.st.TaskInstanceFinishLater(f.ctx, finish(c.ID))
	must(t, errors.Join(err, check()), "finish later outside a transaction")
	for id, want := range map[string]core.TIState{a.ID: core.TISuccess, b.ID: core.TIQueued, c.ID: core.TISuccess} {
		if got := f.get(id).State; got != want {
			t.Errorf("%s is %s, want %s", id, got, want)
		}
	}
}

func testStale(t *testing.T, f *fixture) {
	fresh, old, claimedOld, claimedFresh, idle := newTI("fresh", core.TIQueued), newTI("old", core.TIQueued),
		newTI("claimed_old", core.TIQueued), newTI("claimed_fresh", core.TIQueued), newTI("idle", core.TIQueued)
	for i, ti := range []*store.NewTaskInstance{&fresh, &old, &claimedOld, &claimedFresh} {
		ti.PriorityWeight = 10 - i // claim order below
	}
	f.run("etl", "r1", fresh, old, claimedOld, claimedFresh, idle)
	claim := func(at time.Time) string {
		t.Helper()
		got, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w", Limit: 1, Now: at})
		must(t, err, "claim")
		return got[0].ID
	}
	start := func(id string, at time.Time) {
		t.Helper()
		_, err := f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: id, WorkerID: "w", Now: at})
		must(t, err, "start")
	}
	start(claim(f.now), f.now)
	start(claim(f.now), f.now)
	claim(f.now)
	claim(f.at(10 * time.Minute))
	must(t, f.st.TaskInstanceHeartbeat(f.ctx, fresh.ID, f.at(10*time.Minute)), "heartbeat fresh")

	stale, err := f.st.TaskInstanceStale(f.ctx, f.at(5*time.Minute))
	must(t, err, "stale")
	if diff := sortedDiff([]string{"old", "claimed_old"}, taskIDs(stale)); diff != "" {
		t.Errorf("stale (-want +got):\n%s", diff)
	}
}

func testActiveCounts(t *testing.T, f *fixture) {
	a, b, c, d := newTI("a", core.TIQueued), newTI("b", core.TIQueued), newTI("c", core.TINone), newTI("d", core.TIQueued)
	a.PoolSlots, b.Pool = 2, "small"
	r1 := f.run("etl", "r1", a, b, c)
	r2 := f.run("other", "r1", d)
	got, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w", Limit: 10, Now: f.now})
	must(t, err, "claim")
	_, err = f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: got[0].ID, WorkerID: "w", Now: f.now})
	must(t, err, "start")
	e, g := newTI("e", core.TIQueued), newTI("g", core.TIQueued)
	g.Queue = "gpu"
	r3 := f.run("third", "r1", e, g) // queued after the claim: claimable, one per queue
	counts, err := f.st.TaskInstanceActiveCounts(f.ctx)
	must(t, err, "counts")
	want := &store.ActiveCounts{PoolSlots: map[string]int{core.DefaultPool: 5, "small": 1},
		ByDag: map[string]int{"etl": 2, "other": 1, "third": 2}, ByRun: map[int64]int{r1.ID: 2, r2.ID: 1, r3.ID: 2},
		Claimable: map[string]int{core.DefaultQueue: 1, "gpu": 1}}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("active counts (-want +got):\n%s", diff)
	}
	must(t, f.st.PoolUpsert(f.ctx, &core.Pool{Name: "small", Slots: 2, Description: "two"}), "pool")
	listed, err := f.st.PoolList(f.ctx, &store.PoolListParams{})
	must(t, err, "list pools")
	// The queueing pass's first read: the same counts, the pools with
	// withPools, and a page of scheduled instances in priority order.
	s1, s2, s3 := newTI("s1", core.TIScheduled), newTI("s2", core.TIScheduled), newTI("s3", core.TIScheduled)
	s2.PriorityWeight, s3.PriorityWeight = 5, 3
	f.run("fourth", "r1", s1, s2, s3)
	first := &store.TaskInstanceListParams{States: []core.TIState{core.TIScheduled}, OrderByPriority: true,
		Page: store.Page{Limit: 2}}
	listedTIs, err := f.st.TaskInstanceList(f.ctx, first)
	must(t, err, "list scheduled")
	for _, withPools := range []bool{true, false} {
		pools, counts, page, err := f.st.QueueingReads(f.ctx, withPools, first)
		must(t, err, "queueing reads")
		slices.SortFunc(pools, func(a, b core.Pool) int { return strings.Compare(a.Name, b.Name) })
		if !withPools {
			listed = nil
		}
		if diff := cmp.Diff(listed, pools); diff != "" || withPools && len(pools) < 2 {
			t.Errorf("queueing reads (pools %v): pools (-listed +read with the counts):\n%s", withPools, diff)
		}
		if diff := cmp.Diff(want, counts); diff != "" {
			t.Errorf("queueing reads (pools %v): counts (-want +got):\n%s", withPools, diff)
		}
		if diff := cmp.Diff(listedTIs, page); diff != "" || len(page) != 2 || page[0].TaskID != "s2" || page[1].TaskID != "s3" {
			t.Errorf("queueing reads (pools %v): page %v, want [s2 s3] as TaskInstanceList reads them:\n%s", withPools, taskIDs(page), diff)
		}
	}
}

// RunBenchClaimStartFinish runs BenchClaimStartFinish over a fresh store
// from newStore at the sizes every engine reports: batch1, batch16 and
// batch16x4workers.
func RunBenchClaimStartFinish(b *testing.B, newStore func(b *testing.B) store.Store) {
	for _, bc := range []struct {
		name           string
		batch, workers int
	}{{"batch1", 1, 1}, {"batch16", 16, 1}, {"batch16x4workers", 16, 4}} {
		b.Run(bc.name, func(b *testing.B) {
			BenchClaimStartFinish(b, newStore(b), bc.batch, bc.workers)
		})
	}
}

// BenchClaimStartFinish measures the worker's store path per task
// instance: claim (in batches of batch), start, finish. workers claimers run
// at once. b.N task instances are queued before the timer starts.
func BenchClaimStartFinish(b *testing.B, st store.Store, batch, workers int) {
	ctx := b.Context()
	now := time.Now().UTC()
	_, _, err := st.DagSync(ctx, &store.DagSyncParams{Spec: core.DAG{DagID: "bench"}, Hash: "h", Now: now})
	if err != nil {
		b.Fatal(err)
	}
	seed := make([]store.NewTaskInstance, b.N)
	for i := range seed {
		seed[i] = newTI(fmt.Sprintf("t%07d", i), core.TIQueued)
	}
	if _, err := st.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: "bench", RunID: fmt.Sprintf("r%d", b.N),
		RunType: core.RunManual, State: core.RunRunning, Now: now, TaskInstances: seed}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("w%d", w)
			for {
				tis, err := st.TaskInstanceClaim(ctx, &store.TaskInstanceClaimParams{WorkerID: id, Limit: batch, Now: now})
				if err != nil {
					b.Error(err)
					return
				}
				if len(tis) == 0 {
					return
				}
				for _, ti := range tis {
					if _, err := st.TaskInstanceStart(ctx, &store.TaskInstanceStartParams{ID: ti.ID, WorkerID: id, Now: now}); err != nil {
						b.Error(err)
						return
					}
					if err := st.TaskInstanceFinish(ctx, &store.TaskInstanceFinishParams{ID: ti.ID, State: core.TISuccess, Now: now}); err != nil {
						b.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "TI/s")
}

// testClaimReclaim: a worker's claim with Reclaim gets back, first, its own
// claims it did not start and does not hold (their answer was lost), and
// never another worker's claims or its running tries.
func testClaimReclaim(t *testing.T, f *fixture) {
	lost, held, started, other, free := newTI("lost", core.TIQueued), newTI("held", core.TIQueued),
		newTI("started", core.TIQueued), newTI("other", core.TIQueued), newTI("free", core.TIQueued)
	for i, ti := range []*store.NewTaskInstance{&lost, &held, &started, &other, &free} {
		ti.PriorityWeight = 10 - i // claim order below; free comes last
	}
	f.run("etl", "r1", lost, held, started, other, free)
	claim := func(p store.TaskInstanceClaimParams) []core.TaskInstance {
		t.Helper()
		if p.Now.IsZero() {
			p.Now = f.now
		}
		got, err := f.st.TaskInstanceClaim(f.ctx, &p)
		must(t, err, "claim")
		return got
	}
	claim(store.TaskInstanceClaimParams{WorkerID: "w1", Limit: 3})
	claim(store.TaskInstanceClaimParams{WorkerID: "w2", Limit: 1}) // other
	_, err := f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: started.ID, WorkerID: "w1", Now: f.now})
	must(t, err, "start")

	if got := claim(store.TaskInstanceClaimParams{WorkerID: "w1", Limit: 5}); len(got) != 1 || got[0].TaskID != "free" {
		t.Fatalf("claim without Reclaim = %v, want [free] only", taskIDs(got))
	}
	at := f.at(time.Minute)
	got := claim(store.TaskInstanceClaimParams{WorkerID: "w1", Limit: 5, Reclaim: true, Holding: []string{held.ID, free.ID}, Now: at})
	if len(got) != 1 || got[0].TaskID != "lost" || got[0].WorkerID != "w1" || got[0].State != core.TIQueued {
		t.Fatalf("reclaim = %v, want [lost], still queued and w1's", taskIDs(got))
	}
	stale, err := f.st.TaskInstanceStale(f.ctx, f.at(30*time.Second))
	must(t, err, "stale")
	for _, ti := range stale {
		if ti.TaskID == "lost" {
			t.Errorf("the reclaimed instance is a stale claim 30 s after its first claim: its claim time should restart")
		}
	}
	// Holding nothing, w1 gets back every unstarted claim of its own,
	// before any unclaimed instance.
	_, err = f.st.TaskInstanceSetState(f.ctx, &store.TaskInstanceSetStateParams{IDs: []string{other.ID}, From: []core.TIState{core.TIQueued},
		To: core.TIQueued, Now: f.now})
	must(t, err, "release other")
	got = claim(store.TaskInstanceClaimParams{WorkerID: "w1", Limit: 2, Reclaim: true})
	if diff := sortedDiff([]string{"held", "lost"}, taskIDs(got)); diff != "" {
		t.Errorf("reclaim holding nothing (-want +got):\n%s", diff)
	}
	if got := claim(store.TaskInstanceClaimParams{WorkerID: "w3", Limit: 5, Reclaim: true}); len(got) != 1 || got[0].TaskID != "other" {
		t.Errorf("w3 reclaim = %v, want [other] (never another worker's claims)", taskIDs(got))
	}
}

// testClaimReclaimStarted: with Reclaim and its process (hostname, pid), a
// worker also gets back, first and as they are (running), the tries that
// process started and does not hold — a claim that started its tries and
// whose answer was lost — counted against the limit; never a try another
// process of the same worker started (its next life: that try's retry is
// right), nor one it holds, nor another worker's.
func testClaimReclaimStarted(t *testing.T, f *fixture) {
	mine, held, lifeBefore, other, free := newTI("mine", core.TIQueued), newTI("held", core.TIQueued),
		newTI("life_before", core.TIQueued), newTI("other", core.TIQueued), newTI("free", core.TIQueued)
	for i, ti := range []*store.NewTaskInstance{&mine, &held, &lifeBefore, &other, &free} {
		ti.PriorityWeight = 10 - i // the claim order below
	}
	f.run("etl", "r1", mine, held, lifeBefore, other, free)
	start := func(ti store.NewTaskInstance, worker, host string, pid int) {
		t.Helper()
		got, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: worker, Limit: 1, Now: f.now})
		must(t, err, "claim")
		if len(got) != 1 || got[0].ID != ti.ID {
			t.Fatalf("claim = %v, want %s", taskIDs(got), ti.TaskID)
		}
		_, err = f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: ti.ID, WorkerID: worker, Hostname: host, PID: pid, Now: f.now})
		must(t, err, "start")
	}
	start(mine, "w1", "h1", 100)
	start(held, "w1", "h1", 100)
	start(lifeBefore, "w1", "h1", 99)
	start(other, "w2", "h1", 100)

	p := store.TaskInstanceClaimParams{WorkerID: "w1", Limit: 1, Reclaim: true, Holding: []string{held.ID}, Hostname: "h1", PID: 100, Now: f.now}
	got, err := f.st.TaskInstanceClaim(f.ctx, &p)
	must(t, err, "reclaim")
	if len(got) != 1 || got[0].TaskID != "mine" || got[0].State != core.TIRunning {
		t.Fatalf("reclaim with limit 1 = %v, want [mine] running", taskIDs(got))
	}
	p.Limit = 5
	got, err = f.st.TaskInstanceClaim(f.ctx, &p)
	must(t, err, "reclaim")
	if ids := taskIDs(got); len(got) != 2 || got[0].TaskID != "mine" || got[1].TaskID != "free" || got[1].State != core.TIQueued {
		t.Errorf("reclaim with limit 5 = %v, want [mine free]: the started try first, then a claim", ids)
	}
	p.PID = 0 // without its process, no started try comes back
	got, err = f.st.TaskInstanceClaim(f.ctx, &p)
	must(t, err, "reclaim")
	for _, ti := range got {
		if ti.State == core.TIRunning {
			t.Errorf("reclaim without a pid returned the running %s", ti.TaskID)
		}
	}
}

// testClaimStarts: a claim with Start starts what it claims for the
// process in the same statement (running, its host and pid, started and
// heartbeating now), tells Started exactly those (not the running tries a
// reclaim returns as they are), and an error from Started fails the claim:
// in a transaction nothing is claimed or started.
func testClaimStarts(t *testing.T, f *fixture) {
	first, second, later := newTI("first", core.TIQueued), newTI("second", core.TIQueued), newTI("later", core.TIQueued)
	first.PriorityWeight, second.PriorityWeight = 2, 1
	f.run("etl", "r1", first, second, later)
	var told []string
	p := store.TaskInstanceClaimParams{WorkerID: "w1", Limit: 1, Hostname: "h1", PID: 100, Start: true, Now: f.now,
		Started: func(tis []core.TaskInstance) error {
			told = append(told, taskIDs(tis)...)
			return nil
		}}
	got, err := f.st.TaskInstanceClaim(f.ctx, &p)
	must(t, err, "claim and start")
	if len(got) != 1 || got[0].TaskID != "first" {
		t.Fatalf("claim = %v, want [first]", taskIDs(got))
	}
	ti := f.get(first.ID)
	if ti.State != core.TIRunning || ti.WorkerID != "w1" || ti.Hostname != "h1" || ti.PID != 100 ||
		ti.StartDate == nil || !ti.StartDate.Equal(f.now) || ti.LastHeartbeat == nil || !ti.LastHeartbeat.Equal(f.now) || ti.EndDate != nil {
		t.Errorf("started try = %s by %q on %s/%d, start %v, heartbeat %v, end %v; want running by w1 on h1/100 started and beating now",
			ti.State, ti.WorkerID, ti.Hostname, ti.PID, ti.StartDate, ti.LastHeartbeat, ti.EndDate)
	}
	if got[0].State != core.TIRunning || got[0].Hostname != "h1" {
		t.Errorf("the claim returned %s on %q, want the try as started", got[0].State, got[0].Hostname)
	}

	// A reclaim returns first, as it is, the try this process started: it
	// is not started again nor told.
	told = nil
	p.Reclaim, p.Limit = true, 2
	got, err = f.st.TaskInstanceClaim(f.ctx, &p)
	must(t, err, "reclaim and start")
	if ids := taskIDs(got); len(got) != 2 || got[0].TaskID != "first" || got[1].TaskID != "second" || got[1].State != core.TIRunning {
		t.Fatalf("reclaim = %v, want [first second], second started", ids)
	}
	if len(told) != 1 || told[0] != "second" {
		t.Errorf("Started was told %v, want [second] only", told)
	}

	// Started fails: the claim fails, and its transaction rolls back.
	p.Reclaim, p.Limit = false, 1
	p.Started = func([]core.TaskInstance) error { return errors.New("boom") }
	err = f.st.WithTx(f.ctx, func(tx store.Store) error {
		_, err := tx.TaskInstanceClaim(f.ctx, &p)
		return err
	})
	if err == nil {
		t.Fatal("a claim whose Started failed succeeded")
	}
	if ti := f.get(later.ID); ti.State != core.TIQueued || ti.WorkerID != "" || ti.StartDate != nil {
		t.Errorf("after a failed claim later is %s by %q started %v, want queued, unclaimed", ti.State, ti.WorkerID, ti.StartDate)
	}
	// A claim whose time was read before the queueing's (it waited for its
	// commit) starts the try when it was queued, not before.
	queued := newTI("queued", core.TIQueued)
	f.run("etl", "r-early", queued)
	got, err = f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w2", Limit: 1, Hostname: "h2", PID: 200,
		Start: true, Now: f.at(-time.Second)})
	must(t, err, "claim and start with an earlier time")
	if len(got) != 1 || got[0].StartDate == nil || got[0].QueuedAt == nil || got[0].StartDate.Before(*got[0].QueuedAt) {
		t.Fatalf("a claim reading its time before the queueing's started %v: start %v, queued %v; want started no earlier than queued",
			taskIDs(got), got[0].StartDate, got[0].QueuedAt)
	}
}

// testClaimRuns: a claim with Runs adds the run of every try it returns
// (claimed, started, or returned running by a reclaim) as DagRunGetByID
// reads it, and keeps a run the caller put there already.
func testClaimRuns(t *testing.T, f *fixture) {
	a, b, c := newTI("a", core.TIQueued), newTI("b", core.TIQueued), newTI("c", core.TIQueued)
	a.PriorityWeight, b.PriorityWeight = 3, 2
	r1 := f.run("etl", "r1", a)
	r2 := f.run("etl", "r2", b)
	r3 := f.run("etl", "r3", c)
	known := &core.DagRun{ID: r3.ID, RunID: "as the caller read it"}
	p := store.TaskInstanceClaimParams{WorkerID: "w1", Limit: 2, Hostname: "h1", PID: 100, Start: true, Now: f.now,
		Runs: map[int64]*core.DagRun{r3.ID: known}}
	got, err := f.st.TaskInstanceClaim(f.ctx, &p)
	must(t, err, "claim with runs")
	if len(got) != 2 || got[0].TaskID != "a" || got[1].TaskID != "b" {
		t.Fatalf("claim = %v, want [a b]", taskIDs(got))
	}
	for _, run := range []*core.DagRun{r1, r2} {
		want, err := f.st.DagRunGetByID(f.ctx, run.ID)
		must(t, err, "get run")
		if diff := cmp.Diff(want, p.Runs[run.ID]); diff != "" {
			t.Errorf("run %s of the claim (-read +claim):\n%s", run.RunID, diff)
		}
	}
	if len(p.Runs) != 3 || p.Runs[r3.ID] != known {
		t.Errorf("runs = %v; want r1, r2 and the caller's r3 as it was", p.Runs)
	}

	// A reclaim's running tries come with their runs too.
	p.Reclaim, p.Limit, p.Runs = true, 1, map[int64]*core.DagRun{}
	got, err = f.st.TaskInstanceClaim(f.ctx, &p)
	must(t, err, "reclaim with runs")
	if len(got) != 1 || got[0].State != core.TIRunning || p.Runs[got[0].DagRunID] == nil || len(p.Runs) != 1 {
		t.Errorf("reclaim = %v with runs %v; want a started try and its run", taskIDs(got), p.Runs)
	}
}

// testTaskInstanceListFilters: task instances are listed by pool, queue,
// operator and when their try started (Airflow's list filters).
func testTaskInstanceListFilters(t *testing.T, f *fixture) {
	a, b, c := newTI("a", core.TIQueued), newTI("b", core.TIQueued), newTI("c", core.TINone)
	a.Pool, a.Queue, a.Operator = "db", "gpu", "bash"
	b.Pool, b.Queue, b.Operator = "db", core.DefaultQueue, "http"
	c.Pool, c.Queue, c.Operator = "default_pool", core.DefaultQueue, "bash"
	f.run("etl", "r1", a, b, c)
	_, err := f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w", Queues: []string{"gpu"}, Limit: 1, Now: f.now})
	must(t, err, "claim a")
	_, err = f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: a.ID, WorkerID: "w", Now: f.at(time.Minute)})
	must(t, err, "start a")
	at := func(d time.Duration) *time.Time { x := f.at(d); return &x }
	for _, tc := range []struct {
		what string
		p    store.TaskInstanceListParams
		want string
	}{
		{"pool db", store.TaskInstanceListParams{Pools: []string{"db"}}, "a b"},
		{"queue gpu", store.TaskInstanceListParams{Queues: []string{"gpu"}}, "a"},
		{"operators", store.TaskInstanceListParams{Operators: []string{"bash"}}, "a c"},
		{"started", store.TaskInstanceListParams{StartDate: store.TimeRange{GTE: at(time.Minute), LTE: at(time.Minute)}}, "a"},
		{"started later", store.TaskInstanceListParams{StartDate: store.TimeRange{GTE: at(time.Hour)}}, ""},
		{"ended", store.TaskInstanceListParams{EndDate: store.TimeRange{LTE: at(time.Hour)}}, ""},
	} {
		got, err := f.st.TaskInstanceList(f.ctx, &tc.p)
		must(t, err, "list "+tc.what)
		if ids := strings.Join(taskIDs(got), " "); ids != tc.want {
			t.Errorf("%s: %q, want %q", tc.what, ids, tc.want)
		}
	}
}
