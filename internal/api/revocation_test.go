package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
)

func TestRevokeRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()

	e.mustProblem(http.StatusForbidden, core.RoleOp, http.MethodDelete, "/api/v2/auth/workerCredentials/w1", nil, "admin")
	if _, err := e.st.CredentialRevocationGet(ctx, auth.ScopeWorker, "w1"); err == nil {
		t.Fatal("an op's refused revocation was recorded")
	}
	e.must(http.StatusNoContent, core.RoleAdmin, http.MethodDelete, "/api/v2/auth/workerCredentials/w1", nil, nil)
	r, err := e.st.CredentialRevocationGet(ctx, auth.ScopeWorker, "w1")
	if err != nil || !r.RevokedBefore.Equal(e.clk.Now()) || r.RevokedBy != "admin" {
		t.Fatalf("revocation = %+v, %v; want w1's credentials up to now, by admin", r, err)
	}
	if !e.hasAudit("admin", audit.WorkerRevoke, "w1") {
		t.Error("no audit entry for the revocation")
	}

	// API tokens: an unknown id is 404 naming it; the op's own token is
	// refused on its next request once revoked.
	e.mustProblem(http.StatusNotFound, core.RoleAdmin, http.MethodDelete, "/api/v2/auth/tokens/nope", nil, "nope")
	if status, _ := e.call(core.RoleOp, http.MethodGet, "/api/v2/dags", nil); status != http.StatusOK {
		t.Fatalf("op token before revocation: %d", status)
	}
	e.must(http.StatusNoContent, core.RoleAdmin, http.MethodDelete, "/api/v2/auth/tokens/op-token", nil, nil)
	e.mustProblem(http.StatusUnauthorized, core.RoleOp, http.MethodGet, "/api/v2/dags", nil, "revoked")
}
