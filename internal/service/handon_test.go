package service_test

import (
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
)

// A try's end that claims for its worker (EndTry with a Claim, ADR 0032)
// takes, in its own transaction, the try its success queued: started for
// that worker's process, and no worker is woken for it. What the claim
// does not take (another queue) wakes the workers as before, and a claim
// that fails fails the end, which changes nothing (its worker reports it
// again without the claim).
func TestTryEndHandsItsSlotOn(t *testing.T) {
	t.Parallel()
	ctx, st, svc, run, _, workers := followRun(t)
	claim := func(queue, worker string) *store.TaskInstanceClaimParams {
		return &store.TaskInstanceClaimParams{WorkerID: worker, Queues: []string{queue}, Limit: 1, Start: true, Hostname: "h1", PID: 42}
	}

	a := startTry(t, st, run, "a")
	res, err := svc.EndTry(ctx, a, service.TryEnd{State: core.TISuccess, Claim: claim(core.DefaultQueue, "w1")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Next) != 1 {
		t.Fatalf("a's end claimed %d tries, want b", len(res.Next))
	}
	b := res.Next[0]
	if b.TaskID != "b" || b.State != core.TIRunning || b.WorkerID != "w1" || b.Hostname != "h1" || b.PID != 42 ||
		b.StartDate == nil || !b.StartDate.Equal(t0) {
		t.Fatalf("a's end claimed %s %s by %q on %s:%d from %v; want b running for w1 on h1:42 from the end",
			b.TaskID, b.State, b.WorkerID, b.Hostname, b.PID, b.StartDate)
	}
	if got := states(t, st, run); got["a"] != core.TISuccess || got["b"] != core.TIRunning {
		t.Fatalf("after a's end: a %s, b %s; want success and running", got["a"], got["b"])
	}
	if run := res.Runs[b.DagRunID]; run == nil || run.State != core.RunRunning || len(res.Runs) != 1 {
		t.Errorf("the end's runs = %+v, want b's run, running", res.Runs)
	}
	if heard(workers) {
		t.Error("the workers were woken for b, which a's end took")
	}

	res, err = svc.EndTry(ctx, &b, service.TryEnd{State: core.TISuccess, Claim: claim("other", "w1")})
	if err != nil || len(res.Next) != 0 {
		t.Fatalf("b's end on queue other = %+v, %v; want nothing claimed", res, err)
	}
	if got := states(t, st, run)["c"]; got != core.TIQueued {
		t.Fatalf("c after b's end = %s, want queued", got)
	}
	if !heard(workers) {
		t.Error("the workers were not woken for c, which no claim took")
	}

	side := startTry(t, st, run, "side")
	if _, err := svc.EndTry(ctx, side, service.TryEnd{State: core.TISuccess, Claim: claim(core.DefaultQueue, "")}); err == nil {
		t.Fatal("side's end with a failing claim (no worker) succeeded")
	}
	if got := states(t, st, run); got["side"] != core.TIRunning || got["join"] != core.TINone {
		t.Fatalf("after side's refused end: side %s, join %s; want both unchanged", got["side"], got["join"])
	}
	if res, err := svc.FinishTry(ctx, side, core.TISuccess); err != nil || res.State != core.TISuccess || len(res.Next) != 0 {
		t.Fatalf("side's end reported again alone = %+v, %v; want its success", res, err)
	}
	if got := states(t, st, run)["join"]; got != core.TIQueued {
		t.Fatalf("join after side's end = %s, want queued", got)
	}
	if !heard(workers) {
		t.Error("the workers were not woken for join")
	}
}

// Nothing that follows an end is dated before it, though two ends commit
// in another order than they read the clock: side's end reads the time,
// then a's end (a second later) commits before side's transaction reads
// a's state. join, which side's end then schedules, queues and claims,
// is dated no earlier than a's end.
func TestWhatFollowsIsNotDatedBeforeItsUpstreamsEnds(t *testing.T) {
	t.Parallel()
	clk := &firstReading{Clock: clocktest.New(t0)}
	ctx, st, svc, run, _, _ := followRunAt(t, clk)
	a, side := startTry(t, st, run, "a"), startTry(t, st, run, "side")
	clk.then(func() {
		clk.Advance(time.Second)
		if _, err := svc.FinishTry(ctx, a, core.TISuccess); err != nil {
			t.Error(err)
		}
	})
	res, err := svc.EndTry(ctx, side, service.TryEnd{State: core.TISuccess,
		Claim: &store.TaskInstanceClaimParams{WorkerID: "w1", Queues: []string{core.DefaultQueue}, Limit: 10, Start: true, Hostname: "h1", PID: 42}})
	if err != nil {
		t.Fatal(err)
	}
	aEnd := *listTIs(t, st, run.ID)["a"].EndDate
	for _, ti := range res.Next {
		if ti.TaskID != "join" {
			continue
		}
		if ti.QueuedAt == nil || ti.QueuedAt.Before(aEnd) || ti.StartDate == nil || ti.StartDate.Before(aEnd) {
			t.Fatalf("join queued at %v, started at %v; want neither before a's end at %v", ti.QueuedAt, ti.StartDate, aEnd)
		}
		return
	}
	t.Fatalf("side's end claimed %+v; want join among them", res.Next)
}

// firstReading is a clock whose first reading once next is set runs next
// before it answers with the time it read.
type firstReading struct {
	*clocktest.Clock
	mu   sync.Mutex
	next func()
}

func (c *firstReading) then(f func()) { c.mu.Lock(); c.next = f; c.mu.Unlock() }

func (c *firstReading) Now() time.Time {
	now := c.Clock.Now()
	c.mu.Lock()
	f := c.next
	c.next = nil
	c.mu.Unlock()
	if f != nil {
		f()
	}
	return now
}
