package execclient

import (
	"net/http"
	"strings"
	"sync/atomic"
)

// endpoints are the api-servers a client may call (the same Execution API
// behind each, sharing one database), with the one in use. A client and
// every client WithToken derives from it share one endpoints, so a move
// to the next api-server is made once for all of a worker's calls.
type endpoints struct {
	urls []string
	cur  atomic.Int64
}

// newEndpoints parses a comma-separated list of base URLs (each ending in
// /execution); blanks and trailing slashes are dropped.
func newEndpoints(list string) *endpoints {
	e := &endpoints{}
	for u := range strings.SplitSeq(list, ",") {
		if u = strings.TrimRight(strings.TrimSpace(u), "/"); u != "" {
			e.urls = append(e.urls, u)
		}
	}
	if len(e.urls) == 0 {
		e.urls = []string{""}
	}
	return e
}

// list returns every base URL, comma-separated, the one in use first, so
// that a client made from it starts where this one is.
func (e *endpoints) list() string {
	i, _ := e.current()
	return strings.Join(append(append([]string(nil), e.urls[i:]...), e.urls[:i]...), ",")
}

// current returns the index and base URL of the api-server in use.
func (e *endpoints) current() (int, string) {
	i := int(e.cur.Load()) % len(e.urls)
	return i, e.urls[i]
}

// failed moves on from the api-server at index i to the next one, unless
// a concurrent call moved on already.
func (e *endpoints) failed(i int) {
	if len(e.urls) > 1 {
		e.cur.CompareAndSwap(int64(i), int64((i+1)%len(e.urls)))
	}
}

// unavailable reports whether an answer's status says the api-server
// cannot serve now (a gateway's or an unavailable server's 502, 503, 504),
// so that the next attempt goes to another one, as after no answer.
func unavailable(status int) bool {
	return status == http.StatusBadGateway || status == http.StatusServiceUnavailable ||
		status == http.StatusGatewayTimeout
}
