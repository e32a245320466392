package service

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/store"
)

// maxPoolName is the longest pool name accepted.
const maxPoolName = 256

// PoolChange creates or changes a pool: nil fields keep the current value
// (or take the default of a new pool: no slots, no description).
type PoolChange struct {
	Name        string
	Slots       *int
	Description *string
	// Mode says whether the pool must be new (PoolCreate), must exist
	// (PoolUpdate) or may be either (PoolUpsert, as `weir pools set`).
	Mode PoolMode
}

// PoolMode is what SavePool expects of the pool's existence.
type PoolMode int

// Pool modes.
const (
	PoolUpsert PoolMode = iota
	PoolCreate
	PoolUpdate
)

// SavePool creates or changes a pool and wakes the scheduler (more slots
// may queue waiting tasks at once). Needs role admin. Errors wrap
// core.ErrInvalid (blank or long name, negative slots), core.ErrConflict
// (PoolCreate of an existing pool) or core.ErrNotFound (PoolUpdate of a
// missing one).
func (s *Service) SavePool(ctx context.Context, actor core.Actor, ch PoolChange) (*core.Pool, error) {
	if ch.Name == "" || len(ch.Name) > maxPoolName {
		return nil, fmt.Errorf("pool name must be 1 to %d characters, got %q: %w", maxPoolName, ch.Name, core.ErrInvalid)
	}
	if ch.Slots != nil && *ch.Slots < 0 {
		return nil, fmt.Errorf("pool %q: slots must be 0 or more, got %d: %w", ch.Name, *ch.Slots, core.ErrInvalid)
	}
	c := &change{actor: actor, need: core.RoleAdmin, action: audit.PoolUpdate, target: ch.Name,
		notify: []string{store.ChannelScheduler}}
	var out *core.Pool
	err := s.do(ctx, c, func(tx store.Store, detail *string) error {
		cur, err := poolGet(ctx, tx, ch.Name)
		switch {
		case err == nil && ch.Mode == PoolCreate:
			return fmt.Errorf("pool %q already exists; change its slots instead (PATCH /api/v2/pools/%s or `weir pools set`): %w",
				ch.Name, ch.Name, core.ErrConflict)
		case errors.Is(err, core.ErrNotFound) && ch.Mode != PoolUpdate:
			cur, c.action = &core.Pool{Name: ch.Name}, audit.PoolCreate
		case err != nil:
			return err
		}
		if ch.Slots != nil {
			cur.Slots = *ch.Slots
		}
		if ch.Description != nil {
			cur.Description = *ch.Description
		}
		if err := tx.PoolUpsert(ctx, cur); err != nil {
			return fmt.Errorf("save pool %q: %w", ch.Name, err)
		}
		*detail, out = "slots="+strconv.Itoa(cur.Slots), cur
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeletePool deletes a pool; its queued tasks wait until it exists again.
// default_pool cannot be deleted (tasks that name no pool use it). Needs
// role admin. Errors wrap core.ErrNotFound for a missing pool.
func (s *Service) DeletePool(ctx context.Context, actor core.Actor, name string) error {
	if name == core.DefaultPool {
		return fmt.Errorf("pool %q cannot be deleted: tasks that name no pool use it: %w", core.DefaultPool, core.ErrInvalid)
	}
	c := &change{actor: actor, need: core.RoleAdmin, action: audit.PoolDelete, target: name,
		notify: []string{store.ChannelScheduler}} // the schedulers read the pools again
	return s.do(ctx, c, func(tx store.Store, _ *string) error {
		if _, err := poolGet(ctx, tx, name); err != nil {
			return err
		}
		if err := tx.PoolDelete(ctx, name); err != nil {
			return fmt.Errorf("delete pool %q: %w", name, err)
		}
		return nil
	})
}

// poolGet finds one pool; a missing one wraps core.ErrNotFound naming it.
func poolGet(ctx context.Context, st store.Store, name string) (*core.Pool, error) {
	pools, err := st.PoolList(ctx, &store.PoolListParams{Names: []string{name}})
	if err != nil {
		return nil, fmt.Errorf("get pool %q: %w", name, err)
	}
	if len(pools) == 0 {
		return nil, fmt.Errorf("pool %q: %w", name, core.ErrNotFound)
	}
	return &pools[0], nil
}

// SaveConnection stores a connection. With replace an existing one is
// overwritten (`weir connections add`); without, it is a conflict (POST
// /connections, as Airflow). Needs role admin. Errors wrap core.ErrInvalid
// for a bad id or URI (the message never echoes the URI: it may hold a
// password) and core.ErrConflict.
func (s *Service) SaveConnection(ctx context.Context, actor core.Actor, conn core.Connection, replace bool) error {
	if !validKey(conn.ID) {
		return fmt.Errorf("connection_id %q must be 1 to 250 letters, digits, '_', '-' or '.': %w", conn.ID, core.ErrInvalid)
	}
	if err := checkConnectionURI(conn.ID, conn.URI); err != nil {
		return err
	}
	c := &change{actor: actor, need: core.RoleAdmin, action: audit.ConnectionCreate, target: conn.ID}
	return s.do(ctx, c, func(tx store.Store, _ *string) error {
		// A row that does not decrypt here exists all the same (and is
		// replaced with replace: how a stray key's row is mended).
		_, err := tx.ConnectionGet(ctx, conn.ID)
		if errors.Is(err, secrets.ErrUndecryptable) {
			err = nil
		}
		switch {
		case err == nil && !replace:
			return fmt.Errorf("connection_id %q already exists; delete it first to replace it: %w", conn.ID, core.ErrConflict)
		case err == nil:
			c.action = audit.ConnectionUpdate
		case !errors.Is(err, core.ErrNotFound):
			return fmt.Errorf("look up connection_id %q: %w", conn.ID, err)
		}
		if err := tx.ConnectionUpsert(ctx, &conn); err != nil {
			return fmt.Errorf("save connection_id %q: %w", conn.ID, err)
		}
		return nil
	})
}

// UpdateConnection edits connection id in one transaction: edit gets its
// URI and returns the new one (PATCH /connections/{id}). Needs role admin.
// Errors wrap core.ErrNotFound for an unknown id, core.ErrInvalid for a
// new URI that is not one (or edit's error), and secrets.ErrUndecryptable
// for a row this api-server cannot read (it cannot be edited, only
// replaced).
func (s *Service) UpdateConnection(ctx context.Context, actor core.Actor, id string, edit func(uri string) (string, error)) (core.Connection, error) {
	var conn core.Connection
	c := &change{actor: actor, need: core.RoleAdmin, action: audit.ConnectionUpdate, target: id}
	err := s.do(ctx, c, func(tx store.Store, _ *string) error {
		cur, err := tx.ConnectionGet(ctx, id)
		if err != nil {
			return fmt.Errorf("connection_id %q: %w", id, err)
		}
		uri, err := edit(cur.URI)
		if err != nil {
			return err
		}
		if err := checkConnectionURI(id, uri); err != nil {
			return err
		}
		conn = core.Connection{ID: id, URI: uri}
		if err := tx.ConnectionUpsert(ctx, &conn); err != nil {
			return fmt.Errorf("save connection_id %q: %w", id, err)
		}
		return nil
	})
	return conn, err
}

// checkConnectionURI says what is wrong with a connection's URI, without
// echoing it (it may hold a password).
func checkConnectionURI(id, uri string) error {
	if u, err := url.Parse(uri); err != nil || u.Scheme == "" {
		return fmt.Errorf("connection %q: uri is not a valid connection URI; expected scheme://[login[:password]@]host[:port][/schema][?extra]: %w",
			id, core.ErrInvalid)
	}
	return nil
}

// undecryptableChecked is how many connections, and variables, an
// api-server's start reads for UndecryptableSecrets.
const undecryptableChecked = 500

// UndecryptableSecrets counts the stored connections and variables (the
// first 500 of each) whose values this process cannot decrypt: sealed
// under a key its [core] secrets_key_file lacks, which a node started with
// a key file of its own (created anew, or another node's) meets. An
// api-server says so as it starts, rather than when a task first needs
// one.
func (s *Service) UndecryptableSecrets(ctx context.Context) (connections, variables int, err error) {
	page := store.Page{Limit: undecryptableChecked}
	conns, err := s.st.ConnectionList(ctx, &store.ConnectionListParams{Page: page})
	if err != nil {
		return 0, 0, err
	}
	for _, c := range conns {
		if c.Undecryptable != "" {
			connections++
		}
	}
	vars, err := s.st.VariableList(ctx, &store.VariableListParams{Page: page})
	if err != nil {
		return 0, 0, err
	}
	for _, v := range vars {
		if v.Undecryptable != "" {
			variables++
		}
	}
	return connections, variables, nil
}

// DeleteConnection deletes a stored connection. Needs role admin. Errors
// wrap core.ErrNotFound for a missing one.
func (s *Service) DeleteConnection(ctx context.Context, actor core.Actor, id string) error {
	c := &change{actor: actor, need: core.RoleAdmin, action: audit.ConnectionDelete, target: id}
	return s.do(ctx, c, func(tx store.Store, _ *string) error {
		if err := tx.ConnectionDelete(ctx, id); err != nil { // needs no decryption: a stray key's row goes too
			return fmt.Errorf("delete connection_id %q: %w", id, err)
		}
		return nil
	})
}

// SaveUser creates or updates a user with a bcrypt hash of password and
// role; an existing user's sessions and login tokens end (a new password).
// Needs role admin. Errors wrap core.ErrInvalid for a blank name or
// password or an unknown role.
func (s *Service) SaveUser(ctx context.Context, actor core.Actor, username, password string, role core.Role) error {
	return s.saveUser(ctx, actor, username, password, role, false)
}

// CreateUser is SaveUser for a user that must not exist yet: an existing
// one is left as it is (core.ErrConflict), so that a provisioning script
// run again does not reset a password or change a role.
func (s *Service) CreateUser(ctx context.Context, actor core.Actor, username, password string, role core.Role) error {
	return s.saveUser(ctx, actor, username, password, role, true)
}

func (s *Service) saveUser(ctx context.Context, actor core.Actor, username, password string, role core.Role, mustBeNew bool) error {
	if username == "" {
		return fmt.Errorf("username must not be empty: %w", core.ErrInvalid)
	}
	if !role.Valid() {
		return fmt.Errorf("role %q: want admin, op or viewer: %w", role, core.ErrInvalid)
	}
	c := &change{actor: actor, need: core.RoleAdmin, action: audit.UserUpsert, target: username}
	if mustBeNew {
		c.action = audit.UserCreate
	}
	if err := actor.Authorize(c.need, c.action); err != nil {
		return err // before the deliberately slow hash
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return err
	}
	return s.do(ctx, c, func(tx store.Store, detail *string) error {
		*detail = "role=" + string(role)
		u := &core.User{Username: username, PasswordHash: hash, Role: string(role), CreatedAt: s.clock.Now().UTC(), SessionEpoch: newSessionEpoch()}
		switch old, err := tx.UserGet(ctx, username); {
		case err == nil && mustBeNew:
			return fmt.Errorf("user %q exists (role %s): change it with `weir users update` (PATCH /api/v2/users/%s): %w",
				username, old.Role, username, core.ErrConflict)
		case err == nil: // a new password ends the sessions and login tokens of the old one
			if err := keepAnAdmin(ctx, tx, old, role); err != nil {
				return err
			}
			u.CreatedAt, u.SessionEpoch = old.CreatedAt, old.SessionEpoch+1
			if err := endLoginTokens(ctx, tx, username); err != nil {
				return err
			}
		case !errors.Is(err, core.ErrNotFound):
			return err
		}
		return tx.UserUpsert(ctx, u)
	})
}

// endLoginTokens revokes the API tokens username's password issued (POST
// /api/v2/auth/token, `weir login`), as a new password does: whoever
// learned the old password keeps no access through them. Tokens an admin
// issued (`weir tokens create`) stand.
func endLoginTokens(ctx context.Context, tx store.Store, username string) error {
	if _, err := tx.APITokenDeleteNamed(ctx, username, core.LoginTokenName); err != nil {
		return fmt.Errorf("revoke the login tokens of user %q: %w", username, err)
	}
	return nil
}

// CreateAPIToken issues a bearer API token that acts as username (with
// that user's role at each request) and returns its secret, which is
// shown once: only its hash is stored. ttl 0 = no expiry. Needs role
// admin. Errors wrap core.ErrNotFound for an unknown user.
func (s *Service) CreateAPIToken(ctx context.Context, actor core.Actor, username, name string, ttl time.Duration) (string, error) {
	if ttl < 0 {
		return "", fmt.Errorf("token lifetime %s is negative; give a positive duration, or 0 for no expiry: %w", ttl, core.ErrInvalid)
	}
	if name == core.LoginTokenName { // a new password revokes the tokens so named
		return "", fmt.Errorf("token name %q is the password login's (a new password revokes those tokens); choose another: %w", name, core.ErrInvalid)
	}
	secret, hash := auth.NewToken()
	now := s.clock.Now().UTC()
	t := &core.APIToken{ID: uuid.NewString(), Name: name, Username: username, Hash: hash, CreatedAt: now}
	if ttl > 0 {
		exp := now.Add(ttl)
		t.ExpiresAt = &exp
	}
	c := &change{actor: actor, need: core.RoleAdmin, action: audit.APITokenCreate, target: username}
	err := s.do(ctx, c, func(tx store.Store, detail *string) error {
		if _, err := tx.UserGet(ctx, username); err != nil {
			return fmt.Errorf("user %q: %w (create it with `weir users create`)", username, err)
		}
		*detail = "token " + t.ID + " name=" + name
		return tx.APITokenCreate(ctx, t)
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

// RevokeAPIToken deletes an API token by id: requests bearing it are
// refused from then on. Needs role admin. Errors wrap core.ErrNotFound
// naming the id.
func (s *Service) RevokeAPIToken(ctx context.Context, actor core.Actor, id string) error {
	return s.revokeAPIToken(ctx, actor, core.RoleAdmin, id)
}

// RevokeOwnAPIToken deletes the API token id that actor authenticated
// with (a logout): any role may revoke its own token. The caller vouches
// that the token is actor's.
func (s *Service) RevokeOwnAPIToken(ctx context.Context, actor core.Actor, id string) error {
	return s.revokeAPIToken(ctx, actor, core.RoleViewer, id)
}

func (s *Service) revokeAPIToken(ctx context.Context, actor core.Actor, need core.Role, id string) error {
	c := &change{actor: actor, need: need, action: audit.APITokenRevoke, target: id}
	return s.do(ctx, c, func(tx store.Store, detail *string) error {
		if err := tx.APITokenDelete(ctx, id); err != nil {
			return fmt.Errorf("revoke api token %q: %w", id, err)
		}
		*detail = "token " + id
		return nil
	})
}

// RecordLogin writes the audit entry of a user's login (the session itself
// is the API's; nothing else changes).
func (s *Service) RecordLogin(ctx context.Context, username string) error {
	return audit.Record(ctx, s.st, s.clock.Now(), core.Actor{Name: username}, audit.AuthLogin, username, "")
}

// newSessionEpoch is the session epoch of a user created anew: random, so
// that the sessions of a deleted user of the same name never fit it.
func newSessionEpoch() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:])                           // crypto/rand.Read never fails
	return int64(binary.BigEndian.Uint64(b[:]) >> 2) // room to grow by one a logout
}
