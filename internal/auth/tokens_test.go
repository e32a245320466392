package auth

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/clocktest"
)

var testKey = []byte("0123456789abcdef0123456789abcdef-test-key")

func newTokens(t *testing.T) (*Tokens, *clocktest.Clock) {
	t.Helper()
	clk := clocktest.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	tk, err := NewTokens(Config{Key: testKey}, clk)
	if err != nil {
		t.Fatal(err)
	}
	return tk, clk
}

func TestNewTokensRejectsShortKey(t *testing.T) {
	t.Parallel()
	if _, err := NewTokens(Config{Key: []byte("short")}, nil); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
}

func TestIssueValidateClaims(t *testing.T) {
	t.Parallel()
	tk, clk := newTokens(t)
	s, err := tk.IssueExecution("ti-1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := tk.Validate(s)
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject != "ti-1" || c.Scope != ScopeExecution || c.Issuer != DefaultIssuer || c.ID == "" {
		t.Fatalf("claims = %+v", c)
	}
	if aud := c.Audience; len(aud) != 1 || aud[0] != DefaultAudience {
		t.Fatalf("aud = %v", aud)
	}
	if got := c.ExpiresAt.Sub(clk.Now()); got != DefaultExecutionTTL {
		t.Fatalf("lifetime = %v", got)
	}
	w, _ := tk.IssueWorker("w1", 0)
	wc, err := tk.Validate(w)
	if err != nil || wc.Scope != ScopeWorker || wc.Subject != "w1" {
		t.Fatalf("worker claims = %+v, %v", wc, err)
	}
}

func TestValidateRejects(t *testing.T) {
	t.Parallel()
	tk, clk := newTokens(t)
	good, _ := tk.IssueExecution("ti-1")

	other, _ := NewTokens(Config{Key: []byte(strings.Repeat("x", 40))}, clk)
	forged, _ := other.IssueExecution("ti-1")

	wrongAud, _ := NewTokens(Config{Key: testKey, Audience: "urn:other"}, clk)
	otherAud, _ := wrongAud.IssueExecution("ti-1")

	hs256, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, Claims{RegisteredClaims: jwt.RegisteredClaims{
		Subject: "ti-1", Issuer: DefaultIssuer, Audience: jwt.ClaimStrings{DefaultAudience},
		IssuedAt: jwt.NewNumericDate(clk.Now()), ExpiresAt: jwt.NewNumericDate(clk.Now().Add(time.Minute)),
	}}).SignedString(testKey)

	tampered := good[:len(good)-4] + "AAAA"

	for name, tok := range map[string]string{
		"forged": forged, "audience": otherAud, "alg": hs256, "tampered": tampered, "garbage": "abc",
	} {
		if _, err := tk.Validate(tok); !errors.Is(err, core.ErrUnauthorized) {
			t.Errorf("%s: err = %v, want ErrUnauthorized", name, err)
		}
	}

	// The issuer remembers its own tokens (no parse); another process
	// with the same key parses them: both refuse them alike once expired.
	peer, _ := NewTokens(Config{Key: testKey}, clk)
	for name, v := range map[string]*Tokens{"issuer": tk, "peer": peer} {
		if _, err := v.Validate(good); err != nil {
			t.Fatalf("%s: a fresh token: %v", name, err)
		}
	}
	clk.Advance(DefaultExecutionTTL + 5*time.Second) // within leeway
	for name, v := range map[string]*Tokens{"issuer": tk, "peer": peer} {
		if _, err := v.Validate(good); err != nil {
			t.Fatalf("%s: within leeway: %v", name, err)
		}
	}
	clk.Advance(10 * time.Second)
	for name, v := range map[string]*Tokens{"issuer": tk, "peer": peer} {
		_, err := v.Validate(good)
		if !errors.Is(err, core.ErrUnauthorized) || !strings.Contains(err.Error(), "expired") {
			t.Fatalf("%s: expired: err = %v", name, err)
		}
	}
}

func TestNeedsRefresh(t *testing.T) {
	t.Parallel()
	tk, clk := newTokens(t)
	s, _ := tk.IssueExecution("ti-1")
	c, _ := tk.Validate(s)
	// 10 min validity: threshold is max(2 min, 30 s) = 2 min.
	clk.Advance(7*time.Minute + 59*time.Second)
	if tk.NeedsRefresh(c) {
		t.Fatal("refresh with 2m01s left")
	}
	clk.Advance(2 * time.Second)
	if !tk.NeedsRefresh(c) {
		t.Fatal("no refresh with 1m59s left")
	}
	fresh, err := tk.Refresh(c)
	if err != nil {
		t.Fatal(err)
	}
	fc, err := tk.Validate(fresh)
	if err != nil || fc.Subject != "ti-1" || fc.ID == c.ID || !fc.ExpiresAt.After(c.ExpiresAt.Time) {
		t.Fatalf("fresh = %+v, %v", fc, err)
	}
	w, _ := tk.IssueWorker("w", time.Minute)
	wc, _ := tk.Validate(w)
	clk.Advance(50 * time.Second)
	if tk.NeedsRefresh(wc) {
		t.Fatal("worker credentials are not refreshed")
	}
}

// A token validated once is remembered (its signature is not checked
// again), but every later use re-checks its times: it expires on time, and
// a token differing only in its signature is still refused.
func TestValidateRemembersButRechecksExpiry(t *testing.T) {
	t.Parallel()
	tk, clk := newTokens(t)
	s, err := tk.IssueExecution("ti-1")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		c, err := tk.Validate(s)
		if err != nil || c.Subject != "ti-1" {
			t.Fatalf("validate = %+v, %v", c, err)
		}
		c.Subject = "changed by caller" // must not leak into the next answer
	}
	forged := s[:strings.LastIndexByte(s, '.')+1] + strings.Repeat("A", 86)
	if _, err := tk.Validate(forged); !errors.Is(err, core.ErrUnauthorized) {
		t.Fatalf("forged signature: err = %v, want ErrUnauthorized", err)
	}
	clk.Advance(DefaultExecutionTTL + DefaultLeeway + time.Second)
	if _, err := tk.Validate(s); !errors.Is(err, core.ErrUnauthorized) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired remembered token: err = %v, want ErrUnauthorized (expired)", err)
	}
}

func TestCallbackToken(t *testing.T) {
	t.Parallel()
	tk, err := NewTokens(Config{Key: make([]byte, MinKeyBytes)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tk.IssueCallback(42, 2)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tk.Validate(tok)
	if err != nil || c.Scope != ScopeCallback || c.Subject != "42/2" {
		t.Fatalf("callback token claims %+v, %v; want scope callback, subject 42/2", c, err)
	}
}
