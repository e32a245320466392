// Package groupcommit groups concurrent requests into one write
// transaction (a group commit): on a database with one writer (SQLite) a
// commit costs as much for ten requests' changes as for one, and the
// requests that wait for the writer anyway may as well share it.
//
// The first caller leads: it runs Commit, which begins a transaction and,
// once it holds the writer, takes every request queued so far — its own
// and those of the callers that arrived while it waited —, does them and
// commits once; callers that arrive meanwhile wait for the next
// transaction. A lone request waits for nothing but the writer; no timer is
// involved. After its first group the leader hands the rest to a
// goroutine, so that its caller returns as soon as its own request is
// committed.
package groupcommit

import (
	"context"
	"sync"
)

// Group queues requests of type T for Commit; safe for concurrent use.
type Group[T any] struct {
	// Max bounds the requests one transaction takes (at least 1).
	Max int
	// Commit does one transaction's worth of requests: it calls take
	// exactly once — after it holds the writer, or at once when it cannot
	// begin (the requests take then its error) — and records each taken
	// request's outcome in it before returning.
	Commit func(ctx context.Context, take func() []T)

	mu      sync.Mutex
	queue   []entry[T]
	leading bool
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

// lead commits one group, then hands what is queued to a goroutine.
func (g *Group[T]) lead(ctx context.Context) {
	var taken []entry[T]
	g.Commit(ctx, func() []T {
		g.mu.Lock()
		defer g.mu.Unlock()
		n := min(len(g.queue), max(g.Max, 1))
		taken = append(taken[:0], g.queue[:n]...)
		g.queue = g.queue[n:]
		reqs := make([]T, n)
		for i, e := range taken {
			reqs[i] = e.req
		}
		return reqs
	})
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
}
