package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
)

// UserResponse is a user as the API shows it (never the password hash).
type UserResponse struct {
	Username string    `json:"username"`
	Role     core.Role `json:"role"`
}

type putUserInput struct {
	Username string `path:"username" doc:"login name"`
	Body     struct {
		Password string    `json:"password" minLength:"1" doc:"the new password (stored as a bcrypt hash)"`
		Role     core.Role `json:"role" doc:"admin, op or viewer"`
	}
}

func (s *server) registerUsers() {
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "put_user", Method: http.MethodPut, Path: Prefix + "/users/{username}", Tags: []string{"User"},
		Summary:     "Create or update a user",
		Description: "Sets the user's password and role, creating the user when there is none (`weir users create`). Audited as user.upsert.",
		Errors:      []int{http.StatusBadRequest},
	}, s.putUser)
}

func (s *server) putUser(ctx context.Context, in *putUserInput) (*struct{ Body UserResponse }, error) {
	if err := s.svc.SaveUser(ctx, actor(ctx), in.Username, in.Body.Password, in.Body.Role); err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body UserResponse }{UserResponse{Username: in.Username, Role: in.Body.Role}}, nil
}
