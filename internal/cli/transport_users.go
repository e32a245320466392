package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// The users commands' backend methods, local and REST.

// UserList implements backend.
func (b *localBackend) UserList(ctx context.Context, p *store.UserListParams) ([]api.UserResponse, int, error) {
	users, total, err := store.List(ctx, p, b.svc.Store().UserList, b.svc.Store().UserCount)
	out := make([]api.UserResponse, len(users))
	for i, u := range users {
		out[i] = api.UserResponse{Username: u.Username, Role: core.Role(u.Role), CreatedAt: u.CreatedAt}
	}
	return out, total, err
}

// UserGet implements backend.
func (b *localBackend) UserGet(ctx context.Context, username string) (*api.UserResponse, error) {
	u, err := b.svc.Store().UserGet(ctx, username)
	if errors.Is(err, core.ErrNotFound) {
		return nil, fmt.Errorf("user %q: %w", username, core.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return &api.UserResponse{Username: u.Username, Role: core.Role(u.Role), CreatedAt: u.CreatedAt}, nil
}

// UserUpdate implements backend.
func (b *localBackend) UserUpdate(ctx context.Context, username string, ch service.UserChange) (*api.UserResponse, error) {
	u, err := b.svc.UpdateUser(ctx, b.actor, username, ch)
	if err != nil {
		return nil, err
	}
	return &api.UserResponse{Username: u.Username, Role: core.Role(u.Role), CreatedAt: u.CreatedAt}, nil
}

// UserDelete implements backend.
func (b *localBackend) UserDelete(ctx context.Context, username string) error {
	return b.svc.DeleteUser(ctx, b.actor, username)
}

// UserList implements backend (GET /users).
func (b *restBackend) UserList(ctx context.Context, p *store.UserListParams) ([]api.UserResponse, int, error) {
	var out api.UserCollection
	err := b.c.Get(ctx, "/users", pageQuery(p.Page), &out)
	return out.Users, out.TotalEntries, err
}

// UserGet implements backend (GET /users/{username}).
func (b *restBackend) UserGet(ctx context.Context, username string) (*api.UserResponse, error) {
	var out api.UserResponse
	if err := b.c.Get(ctx, "/users/"+seg(username), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UserUpdate implements backend (PATCH /users/{username}).
func (b *restBackend) UserUpdate(ctx context.Context, username string, ch service.UserChange) (*api.UserResponse, error) {
	body := map[string]any{}
	if ch.Password != nil {
		body["password"] = *ch.Password
	}
	if ch.Role != nil {
		body["role"] = *ch.Role
	}
	var out api.UserResponse
	if err := b.c.Do(ctx, http.MethodPatch, "/users/"+seg(username), nil, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UserDelete implements backend (DELETE /users/{username}).
func (b *restBackend) UserDelete(ctx context.Context, username string) error {
	return b.c.Do(ctx, http.MethodDelete, "/users/"+seg(username), nil, nil, nil)
}
