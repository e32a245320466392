package chaos

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// proxy forwards TCP connections to the API server; cut makes the server
// unreachable through it (open connections are closed, new ones refused)
// until mend.
type proxy struct {
	ln     net.Listener
	target string // host:port

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
}

// startProxy forwards a loopback port to base (http://host:port) until t
// ends; its URL is the proxy's.
func startProxy(t *testing.T, base string) *proxy {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: u.Host, conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		p.setCut(true)
	})
	return p
}

// URL is where clients reach the API through the proxy.
func (p *proxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		go p.forward(c)
	}
}

// forward copies c to a new connection to the target and back.
func (p *proxy) forward(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	if !p.track(c, s) {
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
	p.untrack(c, s)
}

// track notes an open pair, or closes it when the proxy is cut.
func (p *proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		if p.cut {
			_ = c.Close()
			continue
		}
		p.conns[c] = true
	}
	return !p.cut
}

// untrack closes a pair and forgets it.
func (p *proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

// setCut cuts (closing every open connection) or mends the proxy.
func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			_ = c.Close()
			delete(p.conns, c)
		}
	}
}
