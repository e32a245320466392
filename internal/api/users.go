package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// UserResponse is a user as the API shows it (never the password hash).
type UserResponse struct {
	Username  string    `json:"username"`
	Role      core.Role `json:"role"`
	CreatedAt time.Time `json:"created_at,omitzero"`
}

type putUserInput struct {
	Username string `path:"username" doc:"login name"`
	Body     struct {
		Password string    `json:"password" minLength:"1" doc:"the new password (stored as a bcrypt hash)"`
		Role     core.Role `json:"role" doc:"admin, op or viewer"`
	}
}

type postUserInput struct {
	Body struct {
		Username string    `json:"username" minLength:"1" doc:"login name"`
		Password string    `json:"password" minLength:"1" doc:"the password (stored as a bcrypt hash)"`
		Role     core.Role `json:"role" doc:"admin, op or viewer"`
	}
}

// UserCollection is a page of users, by username.
type UserCollection struct {
	Users        []UserResponse `json:"users"`
	TotalEntries int            `json:"total_entries"`
}

// UsernameParam names a user in the path.
type UsernameParam struct {
	Username string `path:"username" doc:"login name"`
}

type patchUserInput struct {
	UsernameParam
	Body struct {
		Password *string   `json:"password,omitempty" doc:"the new password (not empty); absent = kept"`
		Role     core.Role `json:"role,omitempty" doc:"admin, op or viewer; absent = kept"`
	}
}

func (s *server) registerUsers() {
	tags := []string{"User"}
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "get_users", Method: http.MethodGet, Path: Prefix + "/users", Tags: tags, Summary: "List users",
		Description: listDoc("Lists the users who log in to the API and UI, with their role (never a password hash).", store.UserOrder),
		Errors:      []int{http.StatusBadRequest},
	}, s.listUsers)
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "get_user", Method: http.MethodGet, Path: Prefix + "/users/{username}", Tags: tags,
		Summary: "Get a user", Errors: []int{http.StatusNotFound},
	}, s.getUser)
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "patch_user", Method: http.MethodPatch, Path: Prefix + "/users/{username}", Tags: tags,
		Summary:     "Change a user's password or role",
		Description: "Changes the fields given of an existing user (`weir users update`). Audited as user.update.",
		Errors:      []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.patchUser)
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "delete_user", Method: http.MethodDelete, Path: Prefix + "/users/{username}", Tags: tags,
		Summary:       "Delete a user",
		Description:   "Deletes the user and its API tokens (`weir users delete`); a user cannot delete itself. Audited as user.delete.",
		DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.deleteUser)
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "post_user", Method: http.MethodPost, Path: Prefix + "/users", Tags: tags,
		Summary:       "Create a user",
		Description:   "Creates a user that does not exist yet (`weir users create`); an existing one is left as it is (409). Audited as user.create.",
		DefaultStatus: http.StatusCreated, Errors: []int{http.StatusBadRequest, http.StatusConflict},
	}, s.postUser)
	register(s, core.RoleAdmin, huma.Operation{
		OperationID: "put_user", Method: http.MethodPut, Path: Prefix + "/users/{username}", Tags: []string{"User"},
		Summary:     "Create or update a user",
		Description: "Sets the user's password and role, creating the user when there is none; an existing user's sessions and login tokens end. Audited as user.upsert.",
		Errors:      []int{http.StatusBadRequest},
	}, s.putUser)
}

func (s *server) putUser(ctx context.Context, in *putUserInput) (*struct{ Body UserResponse }, error) {
	if err := s.svc.SaveUser(ctx, actor(ctx), in.Username, in.Body.Password, in.Body.Role); err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body UserResponse }{UserResponse{Username: in.Username, Role: in.Body.Role}}, nil
}

func (s *server) postUser(ctx context.Context, in *postUserInput) (*struct{ Body UserResponse }, error) {
	b := &in.Body
	if err := s.svc.CreateUser(ctx, actor(ctx), b.Username, b.Password, b.Role); err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body UserResponse }{UserResponse{Username: b.Username, Role: b.Role}}, nil
}

func userResponse(u *core.User) UserResponse {
	return UserResponse{Username: u.Username, Role: core.Role(u.Role), CreatedAt: u.CreatedAt}
}

func (s *server) listUsers(ctx context.Context, in *Page) (*struct{ Body UserCollection }, error) {
	list, total, err := listOf(ctx, s, &store.UserListParams{Page: in.store()}, s.st.UserList, s.st.UserCount)
	if err != nil {
		return nil, err
	}
	out := UserCollection{Users: make([]UserResponse, len(list)), TotalEntries: total}
	for i := range list {
		out.Users[i] = userResponse(&list[i])
	}
	return &struct{ Body UserCollection }{out}, nil
}

func (s *server) getUser(ctx context.Context, in *UsernameParam) (*struct{ Body UserResponse }, error) {
	u, err := s.st.UserGet(ctx, in.Username)
	if errors.Is(err, core.ErrNotFound) {
		err = fmt.Errorf("user %q: %w", in.Username, core.ErrNotFound)
	}
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body UserResponse }{userResponse(u)}, nil
}

func (s *server) patchUser(ctx context.Context, in *patchUserInput) (*struct{ Body UserResponse }, error) {
	ch := service.UserChange{Password: in.Body.Password}
	if in.Body.Role != "" {
		ch.Role = &in.Body.Role
	}
	u, err := s.svc.UpdateUser(ctx, actor(ctx), in.Username, ch)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body UserResponse }{userResponse(u)}, nil
}

func (s *server) deleteUser(ctx context.Context, in *UsernameParam) (*struct{}, error) {
	if err := s.svc.DeleteUser(ctx, actor(ctx), in.Username); err != nil {
		return nil, s.problem(ctx, err)
	}
	return nil, nil
}
