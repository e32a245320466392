package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// UserChange is what UpdateUser changes: a nil field is kept.
type UserChange struct {
	Password *string
	Role     *core.Role
}

// UpdateUser changes an existing user's password, role or both. Needs role
// admin. Errors wrap core.ErrNotFound for an unknown user and
// core.ErrInvalid for nothing to change, a blank password or an unknown
// role.
func (s *Service) UpdateUser(ctx context.Context, actor core.Actor, username string, ch UserChange) (*core.User, error) {
	if ch.Password == nil && ch.Role == nil {
		return nil, fmt.Errorf("user %q: nothing to change: give a password, a role or both: %w", username, core.ErrInvalid)
	}
	if ch.Role != nil && !ch.Role.Valid() {
		return nil, fmt.Errorf("role %q: want admin, op or viewer: %w", *ch.Role, core.ErrInvalid)
	}
	if ch.Password != nil && *ch.Password == "" {
		return nil, fmt.Errorf("user %q: the password must not be empty: %w", username, core.ErrInvalid)
	}
	c := &change{actor: actor, need: core.RoleAdmin, action: audit.UserUpdate, target: username}
	if err := actor.Authorize(c.need, c.action); err != nil {
		return nil, err // before the deliberately slow hash
	}
	hash := ""
	if ch.Password != nil {
		var err error
		if hash, err = auth.HashPassword(*ch.Password); err != nil {
			return nil, err
		}
	}
	var out *core.User
	err := s.do(ctx, c, func(tx store.Store, detail *string) error {
		u, err := tx.UserGet(ctx, username)
		if err != nil {
			return userErr(username, err)
		}
		var what []string
		if ch.Role != nil {
			if err := keepAnAdmin(ctx, tx, u, *ch.Role); err != nil {
				return err
			}
			u.Role = string(*ch.Role)
			what = append(what, "role="+u.Role)
		}
		if hash != "" {
			u.PasswordHash = hash
			u.SessionEpoch++ // a new password ends the sessions and login tokens of the old one
			if err := endLoginTokens(ctx, tx, username); err != nil {
				return err
			}
			what = append(what, "password")
		}
		*detail = strings.Join(what, " ")
		out = u
		return tx.UserUpsert(ctx, u)
	})
	return out, err
}

// DeleteUser deletes a user and its API tokens. Needs role admin; an actor
// cannot delete itself. Errors wrap core.ErrNotFound for an unknown user.
func (s *Service) DeleteUser(ctx context.Context, actor core.Actor, username string) error {
	if actor.Name == username {
		return fmt.Errorf("user %q cannot delete itself: log in as another admin: %w", username, core.ErrInvalid)
	}
	c := &change{actor: actor, need: core.RoleAdmin, action: audit.UserDelete, target: username}
	return s.do(ctx, c, func(tx store.Store, _ *string) error {
		u, err := tx.UserGet(ctx, username)
		if err != nil {
			return userErr(username, err)
		}
		if err := keepAnAdmin(ctx, tx, u, ""); err != nil {
			return err
		}
		return userErr(username, tx.UserDelete(ctx, username))
	})
}

// keepAnAdmin refuses (core.ErrConflict) to take role admin from u, giving
// it role (none: deleting u), when u is the last admin: nobody could then
// manage users, pools or connections but through the database.
func keepAnAdmin(ctx context.Context, tx store.Store, u *core.User, role core.Role) error {
	if core.Role(u.Role) != core.RoleAdmin || role == core.RoleAdmin {
		return nil
	}
	n, err := tx.UserCount(ctx, &store.UserListParams{Role: string(core.RoleAdmin), Lock: true})
	if err != nil {
		return err
	}
	if n <= 1 {
		return fmt.Errorf("user %q is the last admin: make another user admin first: %w", u.Username, core.ErrConflict)
	}
	return nil
}

// userErr names an unknown user once (user "x": not found).
func userErr(username string, err error) error {
	if errors.Is(err, core.ErrNotFound) {
		return fmt.Errorf("user %q: %w", username, core.ErrNotFound)
	}
	return err
}
