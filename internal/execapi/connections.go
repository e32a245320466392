package execapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
)

// Connection is a named connection as a running task sees it.
type Connection struct {
	ConnID string `json:"conn_id"`
	URI    string `json:"uri"`
}

// connectionGet serves GET /execution/connections/{conn_id}: a running try
// may read any connection (as in Airflow), so workers need no database.
func (s *server) connectionGet(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	ti, err := s.tokenTI(r, c)
	if err != nil {
		return err
	}
	if ti.State != core.TIRunning {
		return notRunning(ti)
	}
	id := r.PathValue("conn_id")
	conn, err := s.st.ConnectionGet(r.Context(), id)
	if err != nil {
		return fmt.Errorf("connection %q: %w", id, err)
	}
	writeJSON(w, http.StatusOK, Connection{ConnID: conn.ID, URI: conn.URI})
	return nil
}

// ConnectionURI returns the URI of a connection stored in the database
// (created with `weir connections add` or the REST API). It makes a task's
// Client an operator.ConnectionLookup.
func (c *Client) ConnectionURI(ctx context.Context, connID string) (string, error) {
	var out Connection
	if err := c.do(ctx, call{method: http.MethodGet, path: "/connections/" + url.PathEscape(connID), out: &out}); err != nil {
		return "", err
	}
	return out.URI, nil
}
