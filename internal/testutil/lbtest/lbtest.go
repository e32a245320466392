// Package lbtest is a tiny loopback TCP load balancer for tests that start
// Weir's roles as processes: it forwards each new connection to the next of
// its targets in turn (round-robin), skips a target that refuses the
// connection, and can be cut (every open connection closed, new ones
// refused) to make the api-servers behind it unreachable.
package lbtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// LB forwards TCP connections to its targets until its test ends.
type LB struct {
	ln      net.Listener
	targets []string // host:port

	mu    sync.Mutex
	next  int
	cut   bool
	conns map[net.Conn]bool
}

// Start listens on a free loopback port and forwards to targets, each a
// base URL (http://host:port) or host:port; the LB closes when t ends.
func Start(t testing.TB, targets ...string) *LB {
	t.Helper()
	lb := &LB{conns: map[net.Conn]bool{}}
	for _, target := range targets {
		if u, err := url.Parse(target); err == nil && u.Host != "" {
			target = u.Host
		}
		lb.targets = append(lb.targets, target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lb.ln = ln
	go lb.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		lb.SetCut(true)
	})
	return lb
}

// URL is where clients reach the targets through the LB: http://host:port.
func (lb *LB) URL() string { return "http://" + lb.ln.Addr().String() }

// SetCut cuts the LB (closing every open connection, refusing new ones)
// or mends it.
func (lb *LB) SetCut(cut bool) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	lb.cut = cut
	if cut {
		for c := range lb.conns {
			_ = c.Close()
			delete(lb.conns, c)
		}
	}
}

func (lb *LB) serve() {
	for {
		c, err := lb.ln.Accept()
		if err != nil {
			return // closed
		}
		go lb.forward(c)
	}
}

// forward copies c to a new connection to the next target that accepts
// one, and back; c is closed when none does.
func (lb *LB) forward(c net.Conn) {
	var s net.Conn
	for range lb.targets {
		var err error
		if s, err = net.Dial("tcp", lb.pick()); err == nil {
			break
		}
	}
	if s == nil {
		_ = c.Close()
		return
	}
	if !lb.track(c, s) {
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(s, c)
	go pipe(c, s)
	<-done
	lb.untrack(c, s)
}

// pick returns the next target in turn.
func (lb *LB) pick() string {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	target := lb.targets[lb.next%len(lb.targets)]
	lb.next++
	return target
}

// track notes an open pair, or closes it when the LB is cut.
func (lb *LB) track(conns ...net.Conn) bool {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	for _, c := range conns {
		if lb.cut {
			_ = c.Close()
			continue
		}
		lb.conns[c] = true
	}
	return !lb.cut
}

// untrack closes a pair and forgets it.
func (lb *LB) untrack(conns ...net.Conn) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
		delete(lb.conns, c)
	}
}
