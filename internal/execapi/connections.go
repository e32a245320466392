package execapi

import (
	"fmt"
	"net/http"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/execclient"
)

// connectionGet serves GET /execution/connections/{conn_id}: a running try
// may read any connection (as in Airflow), so workers need no database.
func (s *server) connectionGet(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	if _, err := s.tokenTI(r, c); err != nil {
		return err
	}
	id := r.PathValue("conn_id")
	conn, err := s.st.ConnectionGet(r.Context(), id)
	if err != nil {
		return fmt.Errorf("connection %q: %w", id, err)
	}
	writeJSON(w, http.StatusOK, execclient.Connection{ConnID: conn.ID, URI: conn.URI})
	return nil
}
