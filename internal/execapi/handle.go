package execapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// handlerEvents serves GET /execution/task-instances/{id}/stream/events:
// the running try of a streaming operator reads its stream's events from
// sequence index from (absent = the first not handled yet), at most limit
// (service.HandlerEvents holds the rules).
func (s *server) handlerEvents(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	from, err := queryInt(r, "from", -1)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", 0)
	if err != nil {
		return err
	}
	ti, err := s.runningTI(r, c)
	if err != nil {
		return err
	}
	b, err := s.svc.HandlerEvents(r.Context(), ti, from, int(limit))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}

// streamHandled serves POST /execution/task-instances/{id}/stream/handled
// {"through": N}: the running try of a streaming operator records its
// progress (the events up to N are consumed; a retry resumes after them).
func (s *server) streamHandled(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	ti, err := s.runningTI(r, c)
	var req execclient.StreamHandledRequest
	if err == nil {
		err = readJSON(w, r, smallBody, &req)
	}
	var next int64
	if err == nil {
		next, err = s.svc.StreamHandled(r.Context(), ti, req.Through)
	}
	if err == nil {
		writeJSON(w, http.StatusOK, execclient.StreamHandledResponse{Handled: next})
	}
	return err
}

// queryInt reads the integer query parameter name (def when absent),
// refusing one that is not an integer >= -1.
func queryInt(r *http.Request, name string, def int64) (int64, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return def, nil
	}
	v, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || v < -1 {
		return 0, fmt.Errorf("query parameter %s must be an integer >= -1, got %q: %w", name, raw, core.ErrInvalid)
	}
	return v, nil
}
