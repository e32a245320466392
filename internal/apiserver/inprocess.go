package apiserver

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// InProcess returns a transport that serves requests with the server's
// own handler in the caller's goroutine, without a connection: standalone's
// worker talks to its api-server through it, saving each request a
// loopback round trip (socket writes and reads, a connection goroutine,
// request parsing). Everything above the connection is the same — the
// routes, authentication, metrics and the answers — so a worker behaves
// alike over TCP and in process. Tasks' own processes still use the URL.
func (s *Server) InProcess() http.RoundTripper {
	s.inProcessOnce.Do(func() { s.inProcess = inProcessTransport{h: s.Metrics.InstrumentHTTP(s.Handler())} })
	return s.inProcess
}

// inProcessTransport serves a request with h and hands back the recorded
// answer once the handler returns. The answer is buffered whole: what the
// Execution API returns to workers is small JSON (a long-poll claim simply
// returns later).
type inProcessTransport struct{ h http.Handler }

func (t inProcessTransport) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	r := req.Clone(req.Context())
	r.RequestURI = req.URL.RequestURI()
	r.RemoteAddr = "127.0.0.1:0" // what a loopback connection would show
	if r.Body == nil {
		r.Body = http.NoBody
	}
	rec := &recorder{header: http.Header{}}
	defer func() {
		if p := recover(); p != nil { // as net/http does for a connection: the request fails, the process goes on
			resp, err = nil, fmt.Errorf("in-process %s %s: handler panicked: %v", req.Method, req.URL.Path, p)
		}
	}()
	t.h.ServeHTTP(rec, r)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", rec.status, http.StatusText(rec.status)), StatusCode: rec.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rec.header, Body: io.NopCloser(&rec.body), ContentLength: int64(rec.body.Len()), Request: req,
	}, nil
}

// recorder is the http.ResponseWriter of an in-process request.
type recorder struct {
	mu     sync.Mutex
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}

// Flush is a no-op: the answer is handed over when the handler returns.
func (r *recorder) Flush() {}
