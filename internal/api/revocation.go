package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
)

// TokenIDParam names one API token.
type TokenIDParam struct {
	ID string `path:"token_id" doc:"the API token's id (weir tokens list)"`
}

// WorkerNameParam names one worker.
type WorkerNameParam struct {
	Name string `path:"worker_name" doc:"the worker name its credentials were issued for (weir tokens create --worker NAME)"`
}

// registerRevocation adds the routes that revoke API tokens and worker
// credentials.
func (s *server) registerRevocation() {
	tags := []string{"Auth"}
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "revoke_api_token", Method: http.MethodDelete, Path: Prefix + "/auth/tokens/{token_id}", Tags: tags,
		Summary:       "Revoke an API token",
		Description:   "Deletes the token: every api-server refuses it from its next request (each looks API tokens up in the database).",
		DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound},
	}, s.revokeAPIToken)
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "revoke_worker_credentials", Method: http.MethodDelete, Path: Prefix + "/auth/workerCredentials/{worker_name}", Tags: tags,
		Summary: "Revoke a worker's credentials",
		Description: "Revokes every credential issued to the worker up to now (to the second): every api-server refuses them " +
			"within 2 seconds and the worker exits. A credential issued for the name afterwards is valid.",
		DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusBadRequest},
	}, s.revokeWorkerCredentials)
}

func (s *server) revokeAPIToken(ctx context.Context, in *TokenIDParam) (*struct{}, error) {
	if err := s.svc.RevokeAPIToken(ctx, actor(ctx), in.ID); err != nil {
		return nil, s.problem(ctx, err)
	}
	return nil, nil
}

func (s *server) revokeWorkerCredentials(ctx context.Context, in *WorkerNameParam) (*struct{}, error) {
	if err := s.svc.RevokeWorkerCredentials(ctx, actor(ctx), in.Name); err != nil {
		return nil, s.problem(ctx, err)
	}
	return nil, nil
}
