package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/google/uuid"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// UserUpsert creates a user or replaces its password hash and role, and
// its session epoch when u's is later: an epoch never goes back (an update
// that read the user before a concurrent logout cannot revive its
// sessions).
func (s *Store) UserUpsert(ctx context.Context, u *core.User) error {
	_, err := s.writer().ExecContext(ctx, qUserUpsert, u.Username, u.PasswordHash, u.Role, micros(u.CreatedAt), u.SessionEpoch)
	return s.wrap(err, "save user %s", u.Username)
}

// UserGet returns a user or ErrNotFound.
func (s *Store) UserGet(ctx context.Context, username string) (*core.User, error) {
	u, err := scanUser(s.reader().QueryRowContext(ctx, qUserGet, username))
	return u, s.wrap(err, "get user %s", username)
}

// UserList lists a page of users.
func (s *Store) UserList(ctx context.Context, p *store.UserListParams) ([]core.User, error) {
	return listPage(ctx, s, "list users", qUserList, userFilter(p), &userOrder, p.Page, scanUser)
}

// userFilter is the WHERE clause of a user listing.
func userFilter(p *store.UserListParams) *builder {
	b := &builder{}
	if p != nil && p.Role != "" {
		b.where("role = ?", p.Role)
	}
	return b
}

// scanUser reads a row of userCols.
func scanUser(r scanner) (*core.User, error) {
	var (
		u  core.User
		at int64
	)
	if err := r.Scan(&u.Username, &u.PasswordHash, &u.Role, &at, &u.SessionEpoch); err != nil {
		return nil, err
	}
	u.CreatedAt = fromMicros(at)
	return &u, nil
}

// UserCount counts the users.
func (s *Store) UserCount(ctx context.Context, p *store.UserListParams) (int, error) {
	if p != nil && p.Lock && s.tx != nil && s.d.RowLock != "" {
		b := userFilter(p)
		var n int
		err := s.tx.QueryRowContext(ctx, fmt.Sprintf(qUserCountLocked, b.clause(), s.d.RowLock), b.args...).Scan(&n)
		return n, s.wrap(err, "count users")
	}
	return s.count(ctx, "count users", qUserCount, userFilter(p))
}

// UserDelete removes a user; its API tokens go with it (ON DELETE
// CASCADE). ErrNotFound when absent.
func (s *Store) UserDelete(ctx context.Context, username string) error {
	return s.execOne(ctx, "delete user "+username, qUserDelete, username)
}

// APITokenCreate stores a token (a new UUID when t.ID is empty, written
// back); ErrNotFound when the user does not exist, ErrConflict on a
// duplicate hash.
func (s *Store) APITokenCreate(ctx context.Context, t *core.APIToken) error {
	if t.ID == "" {
		t.ID = uuid.NewString()
	}
	_, err := s.writer().ExecContext(ctx, qTokenInsert, t.ID, t.Name, t.Username, t.Hash, micros(t.CreatedAt),
		nullMicros(t.ExpiresAt))
	return s.wrap(err, "create api token %q of user %s", t.Name, t.Username)
}

// APITokenGet finds a token by the hash of its secret.
func (s *Store) APITokenGet(ctx context.Context, hash string) (*core.APIToken, error) {
	t, err := scanToken(s.reader().QueryRowContext(ctx, qTokenGetByHash, hash))
	if err != nil {
		return nil, s.wrap(err, "get api token")
	}
	return t, nil
}

// APITokenList lists tokens, oldest first.
func (s *Store) APITokenList(ctx context.Context) ([]core.APIToken, error) {
	rows, err := s.reader().QueryContext(ctx, qTokenList)
	if err != nil {
		return nil, s.wrap(err, "list api tokens")
	}
	out, err := collect(rows, func(r *sql.Rows) (core.APIToken, error) {
		t, err := scanToken(r)
		if err != nil {
			return core.APIToken{}, err
		}
		return *t, nil
	})
	return out, s.wrap(err, "list api tokens")
}

// APITokenDelete removes a token; ErrNotFound when absent.
func (s *Store) APITokenDelete(ctx context.Context, id string) error {
	return s.execOne(ctx, "delete api token "+id, qTokenDelete, id)
}

func scanToken(r scanner) (*core.APIToken, error) {
	var (
		t       core.APIToken
		created int64
		expires sql.NullInt64
	)
	if err := r.Scan(&t.ID, &t.Name, &t.Username, &t.Hash, &created, &expires); err != nil {
		return nil, err
	}
	t.CreatedAt, t.ExpiresAt = fromMicros(created), ptrMicros(expires)
	return &t, nil
}

// APITokenDeleteNamed deletes username's tokens named name.
func (s *Store) APITokenDeleteNamed(ctx context.Context, username, name string) (int64, error) {
	res, err := s.writer().ExecContext(ctx, qTokenDeleteNamed, username, name)
	if err != nil {
		return 0, s.wrap(err, "delete the tokens %q of user %q", name, username)
	}
	return res.RowsAffected()
}
