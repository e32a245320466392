package groupcommit

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a Commit that waits for the writer (a channel) before it
// takes its group, and records the groups it took.
type recorder struct {
	writer chan struct{}
	mu     sync.Mutex
	groups [][]int
}

func (r *recorder) commit(_ context.Context, take func() []int) {
	<-r.writer
	group := take()
	r.mu.Lock()
	r.groups = append(r.groups, group)
	r.mu.Unlock()
}

// queued waits until g holds n requests behind its leader's.
func queued[T any](t *testing.T, g *Group[T], n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		g.mu.Lock()
		got := len(g.queue)
		g.mu.Unlock()
		if got >= n {
			return
		}
	}
	t.Fatalf("fewer than %d requests queued", n)
}

// Requests that arrive while the leader waits for the writer share its
// transaction, at most Max to one; every caller returns once its own
// request was committed.
func TestRequestsWaitingForTheWriterShareATransaction(t *testing.T) {
	t.Parallel()
	r := &recorder{writer: make(chan struct{}, 100)}
	g := &Group[int]{Max: 3, Commit: r.commit}
	var wg sync.WaitGroup
	done := make(chan int, 5)
	do := func(i int) {
		wg.Go(func() {
			g.Do(t.Context(), i)
			done <- i
		})
	}
	do(0) // the leader: waits for the writer with its request taken by none yet
	queued(t, g, 1)
	for i := 1; i < 5; i++ {
		do(i)
		queued(t, g, i+1)
	}
	select {
	case i := <-done:
		t.Fatalf("request %d returned before any commit", i)
	default:
	}
	for range 2 {
		r.writer <- struct{}{}
	}
	wg.Wait()
	close(done)
	var returned []int
	for i := range done {
		returned = append(returned, i)
	}
	slices.Sort(returned)
	if !slices.Equal(returned, []int{0, 1, 2, 3, 4}) {
		t.Errorf("returned: %v, want every request", returned)
	}
	want := [][]int{{0, 1, 2}, {3, 4}}
	if !slices.EqualFunc(r.groups, want, slices.Equal) {
		t.Errorf("groups = %v, want %v (in order, at most Max to one)", r.groups, want)
	}
}

// A lone request is committed by its own caller, in a group of one, and
// the next one leads again.
func TestALoneRequestLeads(t *testing.T) {
	t.Parallel()
	r := &recorder{writer: make(chan struct{}, 2)}
	g := &Group[int]{Max: 8, Commit: r.commit}
	for i := range 2 {
		r.writer <- struct{}{}
		g.Do(t.Context(), i)
	}
	if want := [][]int{{0}, {1}}; !slices.EqualFunc(r.groups, want, slices.Equal) {
		t.Errorf("groups = %v, want %v", r.groups, want)
	}
	if g.leading || len(g.queue) > 0 {
		t.Error("an idle group still has a leader or a queue")
	}
	if g.shared {
		t.Error("after groups of one, the next leader would yield to the other goroutines")
	}
}

// A group that took several requests makes the next leader give the
// ready goroutines a turn before it takes its group; one that took one
// does not.
func TestALeaderYieldsOnlyAfterAGroupOfSeveral(t *testing.T) {
	t.Parallel()
	r := &recorder{writer: make(chan struct{}, 100)}
	g := &Group[int]{Max: 8, Commit: r.commit}
	var wg sync.WaitGroup
	wg.Go(func() { g.Do(t.Context(), 0) })
	queued(t, g, 1)
	wg.Go(func() { g.Do(t.Context(), 1) })
	queued(t, g, 2)
	r.writer <- struct{}{}
	wg.Wait()
	g.mu.Lock()
	shared := g.shared
	g.mu.Unlock()
	if !shared {
		t.Errorf("groups %v: after a group of two the next leader would not yield", r.groups)
	}
	r.writer <- struct{}{}
	g.Do(t.Context(), 2)
	if g.shared {
		t.Errorf("groups %v: after a group of one the next leader would yield", r.groups)
	}
}

// A Commit that panics fails the requests it took and leaves the group
// working for the next ones.
func TestAPanickingCommitFailsItsGroupOnly(t *testing.T) {
	t.Parallel()
	failed := map[int]error{}
	g := &Group[int]{Max: 8, Fail: func(req int, err error) { failed[req] = err }}
	g.Commit = func(_ context.Context, take func() []int) {
		if take()[0] == 0 {
			panic("boom")
		}
	}
	g.Do(t.Context(), 0)
	if err := failed[0]; err == nil || !strings.Contains(err.Error(), "panicked: boom") {
		t.Errorf("the request of the panicking commit: %v", err)
	}
	g.Do(t.Context(), 1) // returns: the group has no leader stuck
	if _, ok := failed[1]; ok || g.leading || len(g.queue) > 0 {
		t.Errorf("after the panic: failed %v, leading %v, queue %d", failed, g.leading, len(g.queue))
	}
}
