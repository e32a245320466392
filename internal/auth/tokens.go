// Package auth issues and validates the JSON Web Tokens of the Execution API:
// a short-lived execution token per task try (subject = the try's
// task-instance id, scope "execution") and a long-lived worker credential
// (subject = worker name, scope "worker") that may claim workloads but not
// touch any task's data. Tokens are HS512-signed with a shared key, as
// Airflow's [api_auth] jwt_secret, and carry the key's id ("kid") so that
// during a rotation the current key signs while previous keys still verify.
package auth

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
)

// Token scopes.
const (
	ScopeExecution = "execution" // one task try's access to its own data
	ScopeWorker    = "worker"    // a worker's right to claim workloads
	// ScopeCallback is one claimed attempt of a callback: its own log,
	// heartbeat and report, nothing of any task's (ADR 0015).
	ScopeCallback = "callback"
)

// Defaults applied by NewTokens to zero Config fields.
const (
	DefaultAudience     = "urn:weir:task"
	DefaultIssuer       = "weir"
	DefaultExecutionTTL = 10 * time.Minute
	DefaultWorkerTTL    = 365 * 24 * time.Hour
	DefaultCallbackTTL  = 10 * time.Minute
	DefaultLeeway       = 10 * time.Second
	// MinKeyBytes is the shortest signing key accepted.
	MinKeyBytes = 32
)

// Config configures token issuance and validation.
type Config struct {
	Key []byte // HS512 signing key, at least MinKeyBytes long
	// VerifyKeys are further keys whose tokens are accepted (the previous
	// keys of a rotation), each at least MinKeyBytes long.
	VerifyKeys   [][]byte
	Issuer       string        // "iss"; "" = DefaultIssuer
	Audience     string        // "aud"; "" = DefaultAudience
	ExecutionTTL time.Duration // execution token lifetime; 0 = DefaultExecutionTTL
	WorkerTTL    time.Duration // worker credential lifetime; 0 = DefaultWorkerTTL
	CallbackTTL  time.Duration // callback token lifetime; 0 = DefaultCallbackTTL
	Leeway       time.Duration // clock skew tolerated; 0 = DefaultLeeway
}

// Claims are the claims of every Weir execution-side token.
type Claims struct {
	jwt.RegisteredClaims
	Scope string `json:"scope"`
	// IssuedMillis is the issue time to the millisecond (iat is to the
	// second): a credential minted in the second of a revocation, after
	// it, is not revoked with it (Revocations.Check). 0 in tokens of before.
	IssuedMillis int64 `json:"iat_ms,omitempty"`
}

// issued is when c was issued, to the millisecond when it says.
func (c *Claims) issued() (time.Time, bool) {
	switch {
	case c.IssuedMillis > 0:
		return time.UnixMilli(c.IssuedMillis), true
	case c.IssuedAt != nil:
		return c.IssuedAt.Time, true
	}
	return time.Time{}, false
}

// Tokens issues and validates tokens. It is safe for concurrent use.
type Tokens struct {
	cfg       Config
	keys      *keyring
	clock     core.Clock
	parser    *jwt.Parser
	validator *jwt.Validator // the parser's time, audience and issuer checks alone

	// verified remembers the claims of tokens signed here or whose
	// signature checked out, keyed by the whole token text (signature
	// included), so that a try's calls (its first too, when this process
	// issued its token) skip decoding and HMAC. Every hit is re-validated by
	// validator against the clock: an expired token is refused as before.
	mu       sync.Mutex
	verified map[string]*Claims
}

// maxVerified bounds the verified-token cache; when full it starts over.
const maxVerified = 4096

// NewTokens checks cfg, applies defaults and returns a Tokens.
func NewTokens(cfg Config, clock core.Clock) (*Tokens, error) {
	keys, err := newKeyring(cfg.Key, cfg.VerifyKeys)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, core.ErrInvalid)
	}
	if cfg.Issuer == "" {
		cfg.Issuer = DefaultIssuer
	}
	if cfg.Audience == "" {
		cfg.Audience = DefaultAudience
	}
	if cfg.ExecutionTTL <= 0 {
		cfg.ExecutionTTL = DefaultExecutionTTL
	}
	if cfg.WorkerTTL <= 0 {
		cfg.WorkerTTL = DefaultWorkerTTL
	}
	if cfg.CallbackTTL <= 0 {
		cfg.CallbackTTL = DefaultCallbackTTL
	}
	if cfg.Leeway <= 0 {
		cfg.Leeway = DefaultLeeway
	}
	if clock == nil {
		clock = core.SystemClock{}
	}
	checks := []jwt.ParserOption{
		jwt.WithLeeway(cfg.Leeway),
		jwt.WithTimeFunc(clock.Now),
		jwt.WithIssuedAt(),
		jwt.WithExpirationRequired(),
		jwt.WithAudience(cfg.Audience),
		jwt.WithIssuer(cfg.Issuer),
	}
	p := jwt.NewParser(append([]jwt.ParserOption{jwt.WithValidMethods([]string{jwt.SigningMethodHS512.Alg()})}, checks...)...)
	return &Tokens{cfg: cfg, keys: keys, clock: clock, parser: p, validator: jwt.NewValidator(checks...),
		verified: map[string]*Claims{}}, nil
}

// SigningKeyID is the key id ("kid") of the key that signs new tokens.
func (t *Tokens) SigningKeyID() string { return t.keys.signKID }

// ExecutionTTL is the lifetime of an execution token.
func (t *Tokens) ExecutionTTL() time.Duration { return t.cfg.ExecutionTTL }

// IssueExecution returns a token for one task try.
func (t *Tokens) IssueExecution(tiID string) (string, error) {
	return t.issue(tiID, ScopeExecution, t.cfg.ExecutionTTL)
}

// IssueCallback returns a token for one claimed attempt of a callback:
// its subject is CallbackSubject(id, attempt).
func (t *Tokens) IssueCallback(id int64, attempt int) (string, error) {
	return t.issue(CallbackSubject(id, attempt), ScopeCallback, t.cfg.CallbackTTL)
}

// CallbackSubject is the subject of a callback token: "<id>/<attempt>".
func CallbackSubject(id int64, attempt int) string {
	return strconv.FormatInt(id, 10) + "/" + strconv.Itoa(attempt)
}

// IssueWorker returns a worker credential for the named worker; ttl 0 means
// the configured WorkerTTL.
func (t *Tokens) IssueWorker(name string, ttl time.Duration) (string, error) {
	if ttl <= 0 {
		ttl = t.cfg.WorkerTTL
	}
	return t.issue(name, ScopeWorker, ttl)
}

func (t *Tokens) issue(sub, scope string, ttl time.Duration) (string, error) {
	if sub == "" {
		return "", fmt.Errorf("issue %s token: empty subject: %w", scope, core.ErrInvalid)
	}
	now := t.clock.Now()
	c := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    t.cfg.Issuer,
			Subject:   sub,
			Audience:  jwt.ClaimStrings{t.cfg.Audience},
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
			ID:        uuid.NewString(),
		},
		Scope:        scope,
		IssuedMillis: now.UnixMilli(),
	}
	jt := jwt.NewWithClaims(jwt.SigningMethodHS512, c)
	jt.Header["kid"] = t.keys.signKID
	s, err := jt.SignedString(t.keys.signer)
	if err != nil {
		return "", fmt.Errorf("sign %s token for %s: %w", scope, sub, err)
	}
	t.remember(s, c) // its first use here (a try's report) parses nothing
	return s, nil
}

// remember caches the claims of a token signed here or verified.
func (t *Tokens) remember(token string, c Claims) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.verified) >= maxVerified {
		clear(t.verified)
	}
	t.verified[token] = &c
}

// Validate checks signature, algorithm, issuer, audience and times (with
// leeway) and returns the claims. A token without a scope counts as an
// execution token, as in Airflow. Every failure wraps core.ErrUnauthorized.
func (t *Tokens) Validate(token string) (*Claims, error) {
	t.mu.Lock()
	known := t.verified[token]
	t.mu.Unlock()
	if known != nil { // signature already verified: check the times again
		if err := t.validator.Validate(known); err != nil {
			return nil, fmt.Errorf("%w: %s", core.ErrUnauthorized, describe(err))
		}
		c := *known
		return &c, nil
	}
	var c Claims
	if _, err := t.parser.ParseWithClaims(token, &c, t.keys.keyFunc); err != nil {
		if u := unknownKey(err); u != nil {
			return nil, fmt.Errorf("%w: %s", core.ErrUnauthorized, u.Error())
		}
		return nil, fmt.Errorf("%w: %s", core.ErrUnauthorized, describe(err))
	}
	if c.Subject == "" {
		return nil, fmt.Errorf("%w: token has no subject", core.ErrUnauthorized)
	}
	if c.Scope == "" {
		c.Scope = ScopeExecution
	}
	t.remember(token, c)
	return &c, nil
}

// describe turns a jwt error into a short message for API clients.
func describe(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "token has expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "token is not valid yet"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "token signature is invalid"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "token audience is not " + DefaultAudience + " or the configured audience"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "token issuer is not trusted"
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "token is malformed"
	}
	return "token is invalid"
}

// NeedsRefresh reports whether an execution token is close enough to expiry
// to be reissued: less than max(20% of its validity, 30 s) remains. Worker
// credentials are never refreshed.
func (t *Tokens) NeedsRefresh(c *Claims) bool {
	if c.Scope != ScopeExecution || c.ExpiresAt == nil || c.IssuedAt == nil {
		return false
	}
	validity := c.ExpiresAt.Sub(c.IssuedAt.Time)
	threshold := max(validity/5, 30*time.Second)
	return c.ExpiresAt.Sub(t.clock.Now()) < threshold
}

// Refresh issues a fresh token with the same subject and scope.
func (t *Tokens) Refresh(c *Claims) (string, error) {
	if c.Scope != ScopeExecution {
		return "", fmt.Errorf("refresh %s token: only execution tokens are refreshed: %w", c.Scope, core.ErrInvalid)
	}
	return t.IssueExecution(c.Subject)
}
