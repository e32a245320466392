package api_test

import (
	"net/http"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// An admin creates or updates a user over REST (weir users create in
// remote mode); an op may not; a bad role is refused naming the roles.
func TestPutUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := map[string]string{"password": "pw", "role": "op"}
	e.mustProblem(http.StatusForbidden, core.RoleOp, "PUT", "/api/v2/users/olga", body, `needs role "admin"`)
	var u map[string]string
	e.must(http.StatusOK, core.RoleAdmin, "PUT", "/api/v2/users/olga", body, &u)
	if u["username"] != "olga" || u["role"] != "op" || len(u) != 2 {
		t.Errorf("PUT /users/olga answered %v", u)
	}
	if got, err := e.st.UserGet(t.Context(), "olga"); err != nil || got.Role != "op" {
		t.Errorf("user olga: %+v, %v", got, err)
	}
	if !e.hasAudit("admin", "user.upsert", "olga") {
		t.Errorf("no audit entry of the change: %+v", e.audit())
	}
	e.mustProblem(http.StatusBadRequest, core.RoleAdmin, "PUT", "/api/v2/users/olga", map[string]string{"password": "pw", "role": "boss"},
		`role "boss": want admin, op or viewer`)
}
