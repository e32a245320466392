package execapi

import (
	"net/http"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/service"
)

// streamBody bounds a push: a few items of at most core.MaxStreamPayloadBytes
// each (a larger item is refused by the service, naming the limit, when the
// body holds it).
const streamBody = 4*core.MaxStreamPayloadBytes + smallBody

// streamPush serves POST /execution/task-instances/{id}/stream: the running
// try of a producer task pushes items to its run's stream
// (service.PushFromTry holds the rules). 200 with the stream's head; 400,
// 409 or 413 with nothing appended.
func (s *server) streamPush(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	ti, err := s.runningTI(r, c)
	var req execclient.StreamPushRequest
	if err == nil {
		err = readJSON(w, r, streamBody, &req)
	}
	var res *core.StreamPushResult
	if err == nil {
		res, err = s.svc.PushFromTry(r.Context(), ti, service.StreamPush{From: &req.From, Items: req.Items, Close: req.Close})
	}
	if err == nil {
		writeJSON(w, http.StatusOK, res)
	}
	return err
}

// streamGet serves GET /execution/task-instances/{id}/stream: where the
// running try's stream stands (next_index 0 before the first push).
func (s *server) streamGet(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	ti, err := s.runningTI(r, c)
	if err != nil {
		return err
	}
	st, err := s.svc.TryStream(r.Context(), ti)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, execclient.StreamHead{StreamID: st.ID, NextIndex: st.NextIndex, Pending: st.Pending, Closed: st.Closed})
	return nil
}
