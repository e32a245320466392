package api_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/weirflow/weir/internal/auth"
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

// An admin lists, reads, changes and deletes users over REST (weir users
// list/get/update/delete remotely); a deleted user's API tokens stop
// working; an admin cannot delete itself; an op may do none of it.
func TestUserAdministration(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must(http.StatusOK, core.RoleAdmin, "PUT", "/api/v2/users/olga", map[string]string{"password": "pw", "role": "op"}, nil)
	e.mustProblem(http.StatusForbidden, core.RoleOp, "GET", "/api/v2/users", nil, `needs role "admin"`)
	var list struct {
		Users []struct {
			Username string `json:"username"`
			Role     string `json:"role"`
		} `json:"users"`
		TotalEntries int `json:"total_entries"`
	}
	e.must(http.StatusOK, core.RoleAdmin, "GET", "/api/v2/users?limit=1&order_by=-username", nil, &list)
	if len(list.Users) != 1 || list.Users[0].Username != "viewer" || list.TotalEntries != 4 {
		t.Errorf("GET /users = %+v, want the last by name of 4 users (admin, op, viewer, olga)", list)
	}
	var u map[string]any
	e.must(http.StatusOK, core.RoleAdmin, "PATCH", "/api/v2/users/olga", map[string]string{"role": "viewer"}, &u)
	if u["role"] != "viewer" || u["created_at"] == nil {
		t.Errorf("PATCH answered %v", u)
	}
	e.must(http.StatusOK, core.RoleAdmin, "GET", "/api/v2/users/olga", nil, &u)
	if u["role"] != "viewer" || !e.hasAudit("admin", "user.update", "olga") {
		t.Errorf("olga after PATCH: %v; audit %+v", u, e.audit())
	}
	e.mustProblem(http.StatusNotFound, core.RoleAdmin, "PATCH", "/api/v2/users/nobody", map[string]string{"role": "op"}, `user "nobody": not found`)
	e.mustProblem(http.StatusBadRequest, core.RoleAdmin, "PATCH", "/api/v2/users/olga", map[string]string{}, "nothing to change")

	secret, hash := auth.NewToken()
	if err := e.st.APITokenCreate(t.Context(), &core.APIToken{ID: "olga-token", Name: "t", Username: "olga", Hash: hash, CreatedAt: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	e.mustProblem(http.StatusBadRequest, core.RoleAdmin, "DELETE", "/api/v2/users/admin", nil, "cannot delete itself")
	e.must(http.StatusNoContent, core.RoleAdmin, "DELETE", "/api/v2/users/olga", nil, nil)
	e.mustProblem(http.StatusNotFound, core.RoleAdmin, "GET", "/api/v2/users/olga", nil, `user "olga": not found`)
	if _, err := e.st.APITokenGet(t.Context(), auth.HashToken(secret)); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("the deleted user's token: %v, want gone", err)
	}
	if !e.hasAudit("admin", "user.delete", "olga") {
		t.Errorf("no audit entry of the delete: %+v", e.audit())
	}
}
