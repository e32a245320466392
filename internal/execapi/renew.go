package execapi

import (
	"fmt"
	"net/http"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// renewToken serves POST /execution/task-instances/{id}/token with a
// worker credential: a fresh execution token for a try that worker
// claimed, when the try's own token expired while no api-server could be
// reached (an outage longer than [api_auth] jwt_expiration_time). The try
// must be one its worker may still report (running, or failed over with
// its retry not begun, as for the lifecycle routes: 409 otherwise); a try
// another worker claimed is 403.
func (s *server) renewToken(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	id := r.PathValue("id")
	ti, err := s.liveTry(r.Context(), id, needLifecycle)
	if err != nil {
		return err
	}
	if ti.WorkerID != c.Subject {
		return fmt.Errorf("task instance %s was claimed by worker %q, not %q: %w", id, ti.WorkerID, c.Subject, core.ErrForbidden)
	}
	tok, err := s.tokens.IssueExecution(id)
	if err != nil {
		return fmt.Errorf("issue a token for task instance %s: %w", id, err)
	}
	writeJSON(w, http.StatusOK, execclient.TokenResponse{Token: tok})
	return nil
}
