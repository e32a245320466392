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

var (
	oldKey = []byte(strings.Repeat("o", 40))
	newKey = []byte(strings.Repeat("n", 40))
)

// TestRotationKeepsOldTokensUntilTheyExpire follows a rotation: the old key
// signed a worker credential and a try's token; after the rotation the new
// key signs and the old one only verifies, so both stay valid until they
// expire, and once the old key is removed they are refused by key id.
func TestRotationKeepsOldTokensUntilTheyExpire(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	before, err := NewTokens(Config{Key: oldKey}, clk)
	if err != nil {
		t.Fatal(err)
	}
	worker, _ := before.IssueWorker("w1", time.Hour)
	exec, _ := before.IssueExecution("ti-1")

	during, err := NewTokens(Config{Key: newKey, VerifyKeys: [][]byte{oldKey}}, clk)
	if err != nil {
		t.Fatal(err)
	}
	if during.SigningKeyID() != KeyID(newKey) || during.SigningKeyID() == before.SigningKeyID() {
		t.Fatalf("signing kid = %s, want the new key's %s", during.SigningKeyID(), KeyID(newKey))
	}
	for name, tok := range map[string]string{"worker": worker, "execution": exec} {
		if _, err := during.Validate(tok); err != nil {
			t.Errorf("%s token of the old key during the rotation: %v", name, err)
		}
	}
	fresh, _ := during.IssueWorker("w2", time.Hour)
	if kid := header(t, fresh)["kid"]; kid != KeyID(newKey) {
		t.Errorf("new token's kid = %v, want %s", kid, KeyID(newKey))
	}
	if _, err := before.Validate(fresh); err == nil {
		t.Error("a server that has not learnt the new key accepted its token")
	}

	clk.Advance(DefaultExecutionTTL + time.Minute) // the try's token expired; the worker's has not
	if _, err := during.Validate(exec); !errors.Is(err, core.ErrUnauthorized) || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired old-key token: err = %v, want expired", err)
	}
	if _, err := during.Validate(worker); err != nil {
		t.Errorf("unexpired old-key worker credential: %v", err)
	}

	after, _ := NewTokens(Config{Key: newKey}, clk)
	_, err = after.Validate(worker)
	if !errors.Is(err, core.ErrUnauthorized) || !strings.Contains(err.Error(), KeyID(oldKey)) {
		t.Errorf("old key removed: err = %v, want unauthorized naming key id %s", err, KeyID(oldKey))
	}
	if _, err := after.Validate(fresh); err != nil {
		t.Errorf("new-key token after the old key's removal: %v", err)
	}
}

func TestForgedKeyIDIsRefused(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	tk, _ := NewTokens(Config{Key: newKey, VerifyKeys: [][]byte{oldKey}}, clk)
	attacker := []byte(strings.Repeat("a", 40))
	sign := func(kid any, key []byte) string {
		j := jwt.NewWithClaims(jwt.SigningMethodHS512, Claims{RegisteredClaims: jwt.RegisteredClaims{
			Subject: "w1", Issuer: DefaultIssuer, Audience: jwt.ClaimStrings{DefaultAudience},
			IssuedAt: jwt.NewNumericDate(clk.Now()), ExpiresAt: jwt.NewNumericDate(clk.Now().Add(time.Hour)),
		}, Scope: ScopeWorker})
		if kid != nil {
			j.Header["kid"] = kid
		}
		s, err := j.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for name, tc := range map[string]struct {
		tok, says string
	}{
		"unknown kid":               {sign("0123456789abcdef", attacker), "not one of this api-server's"},
		"attacker's own kid":        {sign(KeyID(attacker), attacker), "not one of this api-server's"},
		"held kid, other key":       {sign(KeyID(oldKey), attacker), "signature is invalid"},
		"signing kid, other key":    {sign(KeyID(newKey), attacker), "signature is invalid"},
		"kid not a string":          {sign(42, newKey), "not one of this api-server's"},
		"no kid, key not held":      {sign(nil, attacker), "signature is invalid"},
		"old kid but the new key's": {sign(KeyID(oldKey), newKey), "signature is invalid"},
	} {
		_, err := tk.Validate(tc.tok)
		if !errors.Is(err, core.ErrUnauthorized) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: err = %v, want unauthorized saying %q", name, err, tc.says)
		}
	}
	// A token from before key ids (no kid) signed with a held key still
	// verifies, whichever key it was.
	for _, k := range [][]byte{newKey, oldKey} {
		if _, err := tk.Validate(sign(nil, k)); err != nil {
			t.Errorf("token without kid signed with a held key: %v", err)
		}
	}
}

func TestNewTokensRejectsShortVerifyKey(t *testing.T) {
	t.Parallel()
	_, err := NewTokens(Config{Key: newKey, VerifyKeys: [][]byte{[]byte("short")}}, nil)
	if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "verification key 2") {
		t.Fatalf("err = %v, want invalid naming verification key 2", err)
	}
}

func TestSessionsAcceptPreviousKeys(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	old := Sessions{Key: oldKey, Clock: clk}
	rotated := Sessions{Key: newKey, VerifyKeys: [][]byte{oldKey}, Clock: clk}
	v := old.Sign(Session{Username: "ana"}, clk.Now().Add(time.Hour))
	if u, err := rotated.Verify(v); err != nil || u.Username != "ana" {
		t.Fatalf("old-key cookie during rotation: %+v, %v", u, err)
	}
	if !rotated.CheckCSRF(v, old.CSRFToken(v)) {
		t.Error("old-key CSRF token refused during rotation")
	}
	if _, err := (Sessions{Key: newKey, Clock: clk}).Verify(v); !errors.Is(err, core.ErrUnauthorized) {
		t.Errorf("old-key cookie after the old key's removal: err = %v", err)
	}
}

func header(t *testing.T, tok string) map[string]any {
	t.Helper()
	j, _, err := jwt.NewParser().ParseUnverified(tok, &Claims{})
	if err != nil {
		t.Fatal(err)
	}
	return j.Header
}
