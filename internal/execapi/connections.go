package execapi

import (
	"fmt"
	"net/http"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// connectionGet serves GET /execution/connections/{conn_id}: a running try
// may read the connections its task declares (core.Task.DeclaredConnections:
// conn_id, http_conn_id, connections:), or any connection when the
// deployment allows it (Config.AllowAnyConnection, Airflow's
// behaviour), so workers need no database. An undeclared one is 403 naming
// the task and the connection, whether it exists or not.
func (s *server) connectionGet(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	ti, err := s.tokenTI(r, c)
	if err != nil {
		return err
	}
	id := r.PathValue("conn_id")
	if !s.cfg.AllowAnyConnection {
		task, err := s.taskSpec(r.Context(), ti)
		if err != nil {
			return err
		}
		if !task.DeclaresConnection(id) {
			return fmt.Errorf("task %s of dag %s does not declare connection %q: name it in conn_id, http_conn_id or the task's "+
				"connections list (or set [core] allow_any_connection = true to let any task read any connection): %w",
				ti.TaskID, ti.DagID, id, core.ErrForbidden)
		}
	}
	conn, err := s.st.ConnectionGet(r.Context(), id)
	if err != nil {
		return fmt.Errorf("connection %q: %w", id, err)
	}
	writeJSON(w, http.StatusOK, execclient.Connection{ConnID: conn.ID, URI: conn.URI})
	return nil
}
