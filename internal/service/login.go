package service

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// LoginThrottledError is Login's error while the throttle makes the user
// or the address wait; it wraps core.ErrUnauthorized.
type LoginThrottledError struct {
	Wait time.Duration // until the next attempt may be made
}

// Error says how long to wait, in whole seconds rounded up.
func (e *LoginThrottledError) Error() string {
	return "too many failed logins for this user or from this address; try again in " + e.Seconds() + " s"
}

// Seconds is Wait in whole seconds, rounded up (for Retry-After).
func (e *LoginThrottledError) Seconds() string {
	return strconv.Itoa(int((e.Wait + time.Second - 1) / time.Second))
}

// Unwrap makes the error a core.ErrUnauthorized.
func (e *LoginThrottledError) Unwrap() error { return core.ErrUnauthorized }

// ErrBadLogin is Login's error for an unknown user or a wrong password
// (the two are not told apart); it wraps core.ErrUnauthorized.
var ErrBadLogin = fmt.Errorf("invalid username or password: %w", core.ErrUnauthorized)

// Login checks a username and password for a browser or API session,
// throttled per user and per address by th (*LoginThrottledError while a
// key must wait, checked before the password), and records the login in
// the audit log. It is the one login rule of the REST API and the web UI.
func (s *Service) Login(ctx context.Context, th *auth.LoginThrottle, username, password, remote string) (*core.User, error) {
	if wait := th.Wait(username, remote); wait > 0 {
		return nil, &LoginThrottledError{Wait: wait}
	}
	u, err := s.st.UserGet(ctx, username)
	if errors.Is(err, core.ErrNotFound) {
		// Compare anyway so an unknown user takes as long as a wrong password.
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		th.Failed(username, remote)
		return nil, ErrBadLogin
	}
	if err != nil {
		return nil, fmt.Errorf("look up user %q: %w", username, err)
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(password)) != nil {
		th.Failed(username, remote)
		return nil, ErrBadLogin
	}
	th.Succeeded(username, remote)
	if err := s.RecordLogin(ctx, u.Username); err != nil { // the login has happened; keep it
		s.log.ErrorContext(ctx, "write audit log", "action", "auth.login", "user", u.Username, "err", err)
	}
	return u, nil
}

// dummyHash is a bcrypt hash compared against when the user is unknown.
var dummyHash = []byte("$2a$10$7EqJtq98hPqEX7fNZaFWoOhi5BWX4Z3KTsRmHZd4ZXuv2.XHCG6Hy")

// ErrSessionEnded is SessionUser's error for a session its user ended (a
// logout, a new password) or a user deleted since; it wraps
// core.ErrUnauthorized.
var ErrSessionEnded = fmt.Errorf("the session has ended (logged out, the password changed or the user deleted); log in again: %w", core.ErrUnauthorized)

// NewSession starts a login session of u: its own random id, and u's
// session epoch (auth.Sessions signs it into the cookie).
func NewSession(u *core.User) auth.Session {
	return auth.Session{Username: u.Username, Epoch: u.SessionEpoch, ID: auth.NewSessionID()}
}

// SessionUser is the user a verified session cookie stands for, as the
// user is now (its current role): ErrSessionEnded unless the session's
// epoch is still the user's and the session was not logged out
// (EndSession). It is the one session rule of the REST API and the web UI.
func (s *Service) SessionUser(ctx context.Context, sess auth.Session) (*core.User, error) {
	u, err := s.st.UserGet(ctx, sess.Username)
	switch {
	case errors.Is(err, core.ErrNotFound):
		return nil, ErrSessionEnded
	case err != nil:
		return nil, fmt.Errorf("look up user %q: %w", sess.Username, err)
	case u.SessionEpoch != sess.Epoch:
		return nil, ErrSessionEnded
	case sess.ID == "":
		return u, nil
	}
	switch ended, err := s.st.SessionEnded(ctx, sess.ID); {
	case err != nil:
		return nil, fmt.Errorf("look up session of user %q: %w", sess.Username, err)
	case ended:
		return nil, ErrSessionEnded
	}
	return u, nil
}

// EndSession ends one login session (a logout: that browser's, the user's
// others go on) until the session's own expiry. A session signed before
// session ids has none to record: all the user's sessions end
// (EndSessions).
func (s *Service) EndSession(ctx context.Context, sess auth.Session) error {
	if sess.ID == "" {
		return s.EndSessions(ctx, sess.Username)
	}
	if err := s.st.SessionEnd(ctx, sess.ID, sess.Expires, s.clock.Now()); err != nil {
		return fmt.Errorf("end a session of user %q: %w", sess.Username, err)
	}
	return nil
}

// EndSessions ends every login session of username (all its browsers): a
// new password, and the logout of a session signed before session ids.
// The user's session epoch moves on. An unknown user is not an error
// (there is nothing to end).
func (s *Service) EndSessions(ctx context.Context, username string) error {
	err := s.st.WithTx(ctx, func(tx store.Store) error {
		u, err := tx.UserGet(ctx, username)
		if err != nil {
			return err
		}
		u.SessionEpoch++
		return tx.UserUpsert(ctx, u)
	})
	if err != nil && !errors.Is(err, core.ErrNotFound) {
		return fmt.Errorf("end the sessions of user %q: %w", username, err)
	}
	return nil
}
