package execapi

import (
	"fmt"
	"io"
	"net/http"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/tasklog"
)

// appendLog serves POST /execution/task-instances/{id}/logs: the raw body is
// appended to the try's log in the api-server's log folder, so logs work
// when workers run on other machines. A try may append after it finished
// (the final chunk), but only while it is the current try.
func (s *server) appendLog(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	if _, err := ownTI(r, c); err != nil {
		return err
	}
	if s.logs == "" {
		return fmt.Errorf("the api-server has no log folder configured: %w", core.ErrConflict)
	}
	ti, err := s.tokenTI(r, c)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxLogChunk))
	if err != nil {
		return fmt.Errorf("log chunk exceeds %d bytes or could not be read: %w", s.cfg.MaxLogChunk, core.ErrTooLarge)
	}
	if err := tasklog.Append(s.logs, tasklog.KeyOf(ti), body); err != nil {
		return fmt.Errorf("append log of task instance %s: %w", ti.ID, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
