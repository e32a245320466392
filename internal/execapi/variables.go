package execapi

import (
	"fmt"
	"net/http"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/execclient"
)

// variableGet serves GET /execution/variables/{key} to a running try: any
// variable, as Airflow's tasks read any (docs/variables.md).
func (s *server) variableGet(w http.ResponseWriter, r *http.Request, _ *auth.Claims) error {
	key := r.PathValue("key")
	v, err := s.st.VariableGet(r.Context(), key)
	if err != nil {
		return fmt.Errorf("variable %q: %w", key, err)
	}
	writeJSON(w, http.StatusOK, execclient.Variable{Key: v.Key, Value: v.Value})
	return nil
}
