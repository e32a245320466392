package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// Sessions signs and checks browser session cookies and the CSRF tokens
// bound to them. The cookie value
// "<base64 username>.<expiry unix>.<session epoch>.<session id>.<base64 HMAC-SHA256>"
// carries who, until when, the user's session epoch when it was signed
// (core.User.SessionEpoch: a new password moves it on, which ends the
// sessions before) and the session's own random id (a logout records it
// ended: store.SessionEnd), signed with Key, so every api-server sharing
// Key accepts it and the REST API and the web UI share one login. A value
// signed before ids, "<user>.<expiry>.<epoch>.<HMAC>", has none, and one
// signed before epochs, "<user>.<expiry>.<HMAC>", has epoch 0.
type Sessions struct {
	Key []byte // at least 16 bytes; every api-server behind one load balancer must share it
	// VerifyKeys are previous keys whose cookies and CSRF tokens are still
	// accepted during a rotation; Key alone signs.
	VerifyKeys [][]byte
	Clock      core.Clock // nil = core.SystemClock
}

// ErrSessionExpired is wrapped by Verify's error when the signature is
// good but the session has ended.
var ErrSessionExpired = errors.New("session expired")

// Session is what a verified session cookie says.
type Session struct {
	Username string
	Epoch    int64 // the user's session epoch when it was signed
	// ID is the session's own random id ("" in a cookie signed before
	// ids); Verify sets Expires, the session's end.
	ID      string
	Expires time.Time
}

// NewSessionID returns a random session id (128 bits, URL-safe).
func NewSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// Sign returns a cookie value that Verify accepts until expires.
func (s Sessions) Sign(sess Session, expires time.Time) string {
	payload := base64.RawURLEncoding.EncodeToString([]byte(sess.Username)) + "." + strconv.FormatInt(expires.Unix(), 10) +
		"." + strconv.FormatInt(sess.Epoch, 10)
	if sess.ID != "" {
		payload += "." + sess.ID
	}
	return payload + "." + base64.RawURLEncoding.EncodeToString(s.mac("weir-session", payload))
}

// Verify checks a cookie value's signature and expiry and returns the
// session it carries; whether its epoch is still the user's is the
// caller's to check (service.SessionUser). Errors wrap
// core.ErrUnauthorized (and ErrSessionExpired for an expired session).
func (s Sessions) Verify(value string) (Session, error) {
	bad := fmt.Errorf("session cookie is not valid: %w", core.ErrUnauthorized)
	i := strings.LastIndexByte(value, '.')
	if i < 0 {
		return Session{}, bad
	}
	payload, sig := value[:i], value[i+1:]
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !s.anyKey(func(k []byte) bool { return hmac.Equal(got, mac(k, "weir-session", payload)) }) {
		return Session{}, bad
	}
	parts := strings.Split(payload, ".")
	if len(parts) == 2 {
		parts = append(parts, "0") // signed before session epochs
	}
	if len(parts) == 3 {
		parts = append(parts, "") // signed before session ids
	}
	if len(parts) != 4 {
		return Session{}, bad
	}
	unix, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return Session{}, bad
	}
	epoch, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return Session{}, bad
	}
	if !s.now().Before(time.Unix(unix, 0)) {
		return Session{}, fmt.Errorf("%w: %w", ErrSessionExpired, core.ErrUnauthorized)
	}
	user, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return Session{}, bad
	}
	return Session{Username: string(user), Epoch: epoch, ID: parts[3], Expires: time.Unix(unix, 0)}, nil
}

// CSRFToken returns the anti-forgery token of a session: an HMAC of the
// session cookie's value, so it needs no storage, differs per login and
// cannot be computed by a page that cannot read the (HttpOnly) cookie.
func (s Sessions) CSRFToken(session string) string {
	return base64.RawURLEncoding.EncodeToString(s.mac("weir-csrf", session))
}

// CheckCSRF reports whether token is the CSRF token of session.
func (s Sessions) CheckCSRF(session, token string) bool {
	got, err := base64.RawURLEncoding.DecodeString(token)
	return err == nil && session != "" &&
		s.anyKey(func(k []byte) bool { return hmac.Equal(got, mac(k, "weir-csrf", session)) })
}

// anyKey reports whether ok holds for Key or one of VerifyKeys.
func (s Sessions) anyKey(ok func(key []byte) bool) bool {
	if ok(s.Key) {
		return true
	}
	for _, k := range s.VerifyKeys {
		if ok(k) {
			return true
		}
	}
	return false
}

func (s Sessions) mac(label, payload string) []byte { return mac(s.Key, label, payload) }

func mac(key []byte, label, payload string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label + "\x00" + payload))
	return m.Sum(nil)
}

func (s Sessions) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock.Now()
}
