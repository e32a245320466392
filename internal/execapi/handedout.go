package execapi

import (
	"context"
	"net/http"
	"sync"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
)

// handedOut remembers the tries this server started and handed to a worker,
// each under the token handed with it, until the try's state report: a
// report with that very token is ended from the try as it was started,
// without the try gate's read (a round trip on PostgreSQL; docs/performance-history.md,
// issue 14's tenth round). The store still decides: the end is conditioned
// on the state the try was handed out in (running), and a report of a try
// that left it meanwhile (failed over, marked, cleared) is read and judged
// by the gate as before (gateAgain). A token goes with one start of one
// try, so a resumed try (a new start, a new token) never meets the entry of
// an earlier start. At most maxHandedOut entries of maxHandedOutBytes in
// all (a try's map arguments and resumption payloads count): past that
// they are all forgotten (those tries' reports read them), as are the
// entries of tries whose report goes to another api-server.
type handedOut struct {
	mu    sync.Mutex
	tries map[string]*core.TaskInstance // by token
	bytes int                           // their size, roughly (handedSize)
}

const (
	maxHandedOut      = 8192
	maxHandedOutBytes = 16 << 20
)

// handedSize is roughly what an entry of ti holds.
func handedSize(token string, ti *core.TaskInstance) int {
	return 512 + len(token) + len(ti.MapArgs) + len(ti.NextKwargs) + len(ti.NextEvent)
}

// put remembers ti, started, under the token handed with it.
func (h *handedOut) put(token string, ti core.TaskInstance) {
	h.mu.Lock()
	defer h.mu.Unlock()
	size := handedSize(token, &ti)
	if h.tries == nil || len(h.tries) >= maxHandedOut || h.bytes+size > maxHandedOutBytes {
		h.tries, h.bytes = make(map[string]*core.TaskInstance), 0
	}
	h.tries[token] = &ti
	h.bytes += size
}

// take returns and forgets the try handed out with token, nil when none.
func (h *handedOut) take(token string) *core.TaskInstance {
	h.mu.Lock()
	defer h.mu.Unlock()
	ti := h.tries[token]
	if ti != nil {
		delete(h.tries, token)
		h.bytes -= handedSize(token, ti)
	}
	return ti
}

// handedKey marks a request whose try the gate took from handedOut.
type handedKey struct{}

// handed reports whether the gate took r's try from handedOut.
func handed(r *http.Request) bool { return r.Context().Value(handedKey{}) != nil }

// gateAgain is what the try gate does for a report whose try it took from
// handedOut rather than read (r as is for any other): it reads the try and
// checks it as a final state report needs, and r then carries that try.
func (s *server) gateAgain(r *http.Request, c *auth.Claims) (*http.Request, *core.TaskInstance, error) {
	if !handed(r) {
		ti, err := s.tokenTI(r, c)
		return r, ti, err
	}
	ti, err := s.liveTry(r.Context(), c.Subject, needEnd)
	if err != nil {
		return r, nil, err
	}
	ctx := context.WithValue(context.WithValue(r.Context(), handedKey{}, nil), tiKey{}, ti)
	return r.WithContext(ctx), ti, nil
}
