// Package groupcommit groups concurrent requests into one write
// transaction (a group commit): on a database with one writer (SQLite) a
// commit costs as much for ten requests' changes as for one, and the
// requests that wait for the writer anyway may as well share it.
//
// The first caller leads: it runs Commit, which begins a transaction and,
// once it holds the writer, takes every request queued so far — its own
// and those of the callers that arrived while it waited, and, when the
// group before took several (requests come together), those a turn of
// the ready goroutines (runtime.Gosched) adds, concurrent requests a few
// microseconds from their queueing —, does them and commits once; callers
// that arrive meanwhile wait for the next transaction. A lone request
// waits for nothing but the writer: no timer, and no turn of the other
// goroutines while requests come one at a time (a chain's try ends, where
// the turn cost ~9 % of a step). After its first group (and whatever Commit does when that
// group fails) the leader hands the rest to a goroutine, so that its
// caller returns with its own request's outcome.
package groupcommit

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// Group queues requests of type T for Commit; safe for concurrent use.
type Group[T any] struct {
	// Max bounds the requests one transaction takes (at least 1).
	Max int
	// Commit does one transaction's worth of requests: it calls take —
	// after it holds the writer, or at once when it cannot begin (the
	// requests take then its error); later calls return the same
	// requests — and records each taken request's outcome in it before
	// returning.
	Commit func(ctx context.Context, take func() []T)
	// Fail records err as the outcome of a request Commit took and could
	// not give one: it panicked. The group goes on with the next requests.
	Fail func(req T, err error)

	mu      sync.Mutex
	queue   []entry[T]
	leading bool
	shared  bool // the last group took more than one request
}

type entry[T any] struct {
	req  T
	done chan struct{}
}

// Do queues req and returns once a Commit that took it has returned. The
// transaction runs without ctx's cancellation (others' requests share it).
func (g *Group[T]) Do(ctx context.Context, req T) {
	e := entry[T]{req: req, done: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, e)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if lead {
		g.lead(context.WithoutCancel(ctx))
	}
	<-e.done
}

// Pending is how many requests wait for a transaction to take them.
func (g *Group[T]) Pending() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// lead commits one group, then hands what is queued to a goroutine.
func (g *Group[T]) lead(ctx context.Context) {
	var (
		taken []entry[T]
		reqs  []T
		once  bool
	)
	defer func() {
		if p := recover(); p != nil {
			err := fmt.Errorf("group commit panicked: %v\n%s", p, debug.Stack())
			for _, e := range taken {
				g.Fail(e.req, err)
			}
		}
		for _, e := range taken {
			close(e.done)
		}
		g.mu.Lock()
		more := len(g.queue) > 0
		g.leading = more
		g.mu.Unlock()
		if more {
			go g.lead(ctx)
		}
	}()
	g.Commit(ctx, func() []T {
		if once {
			return reqs
		}
		once = true
		g.mu.Lock()
		together := g.shared
		g.mu.Unlock()
		if together {
			runtime.Gosched() // bounded: one turn of the ready goroutines, never a timer
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		n := min(len(g.queue), max(g.Max, 1))
		g.shared = n > 1
		taken = append(taken, g.queue[:n]...)
		g.queue = g.queue[n:]
		reqs = make([]T, n)
		for i, e := range taken {
			reqs[i] = e.req
		}
		return reqs
	})
}
