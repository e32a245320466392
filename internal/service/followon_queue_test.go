package service_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/postgrestest"
	"github.com/weirflow/weir/internal/testutil/sqlcount"
)

// A successor the end's queueing has room for goes from none to queued in
// one update: the end's transaction writes each instance once (a chain
// step on PostgreSQL otherwise leaves a dead row version, index entries
// and a foreign-key check more for every step).
func TestSuccessorIsQueuedStraightFromNone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, counter := sqlcount.OpenSQLite(t, filepath.Join(t.TempDir(), "weir.db"))
	svc := newSvc(st, clocktest.New(t0))
	syncDAG(t, st, core.DAG{DagID: "chain", Tasks: []core.Task{
		{TaskID: "a", Operator: "noop"}, {TaskID: "b", Operator: "noop", DependsOn: []string{"a"}},
	}})
	run := runningRun(t, st, svc, "chain")
	a := startTry(t, st, run, "a")
	counter.Reset()
	if _, err := svc.FinishTry(ctx, a, core.TISuccess); err != nil {
		t.Fatal(err)
	}
	var moves []string
	for _, s := range counter.Stats() {
		if strings.HasPrefix(strings.TrimSpace(s.Query), "UPDATE task_instance SET state = $1") {
			moves = append(moves, s.Query)
		}
	}
	if got := listTIs(t, st, run.ID)["b"]; got.State != core.TIQueued || got.QueuedAt == nil {
		t.Fatalf("b after a's success: %s (queued at %v), want queued", got.State, got.QueuedAt)
	}
	if len(moves) != 1 {
		t.Errorf("the end moved b's state in %d updates, want 1 (none → queued):\n%s", len(moves), strings.Join(moves, "\n"))
	}
}

// The instances an end schedules take their place in the queueing order
// among those already scheduled: with one slot free, the higher priority
// weight gets it, whichever of the two the end decided; the other waits
// scheduled.
func TestSuccessorTakesItsPlaceInTheQueueingOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		waiting, after int // priority weights of the task scheduled before the end, and of the end's successor
		wantQueued     string
	}{
		{"successor first", 1, 10, "b"},
		{"waiting first", 10, 1, "w"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, st, svc, _, _, _ := followRun(t) // pool "one" has one slot
			syncDAG(t, st, core.DAG{DagID: "order", Tasks: []core.Task{
				{TaskID: "a", Operator: "noop"},
				{TaskID: "b", Operator: "noop", DependsOn: []string{"a"}, Pool: "one", PriorityWeight: tc.after},
				{TaskID: "w", Operator: "noop", Pool: "one", PriorityWeight: tc.waiting},
			}})
			run := runningRun(t, st, svc, "order")
			w := listTIs(t, st, run.ID)["w"]
			if _, err := st.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{IDs: []string{w.ID}, To: core.TIScheduled, Now: t0}); err != nil {
				t.Fatal(err)
			}
			a := startTry(t, st, run, "a")
			if _, err := svc.FinishTry(ctx, a, core.TISuccess); err != nil {
				t.Fatal(err)
			}
			got := states(t, st, run)
			other := map[string]string{"b": "w", "w": "b"}[tc.wantQueued]
			if got[tc.wantQueued] != core.TIQueued || got[other] != core.TIScheduled {
				t.Errorf("b %s, w %s; want %s queued and %s scheduled", got["b"], got["w"], tc.wantQueued, other)
			}
		})
	}
}

// While another process holds the queueing lock, an end schedules what
// follows it and leaves the queueing to the scheduler, which it wakes.
func TestSuccessorIsScheduledWhileTheQueueingLockIsHeld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := postgrestest.Open(t)
	svc := newSvc(st, clocktest.New(t0))
	syncDAG(t, st, followDAG)
	run := runningRun(t, st, svc, "follow")
	a := startTry(t, st, run, "a")
	sched := st.Subscribe(ctx, store.ChannelTasks)
	holding, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- st.WithQueueLock(ctx, func(store.Store) error { close(holding); <-release; return nil })
	}()
	<-holding
	_, err := svc.FinishTry(ctx, a, core.TISuccess)
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := states(t, st, run)["b"]; got != core.TIScheduled {
		t.Errorf("b after a's success while the lock was held = %s, want scheduled", got)
	}
	if !heard(sched) {
		t.Error("the end left the queueing to the scheduler without waking it")
	}
}
