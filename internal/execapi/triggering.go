package execapi

import (
	"net/http"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// triggeringEvents serves GET /execution/task-instances/{id}/triggering-asset-events
// ?after=ID&limit=N: a page of the asset events that created the running
// try's run, oldest first (service.TriggeringEvents). A run context holds
// the first MaxTriggeringEvents; `weir assets triggering-events` pages
// through them all.
func (s *server) triggeringEvents(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	after, err := queryInt(r, "after", 0)
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
	events, total, err := s.svc.TriggeringEvents(r.Context(), ti, after, int(limit))
	if err != nil {
		return err
	}
	if events == nil {
		events = []core.AssetEvent{}
	}
	writeJSON(w, http.StatusOK, execclient.TriggeringEventsPage{Events: events, Total: total})
	return nil
}
