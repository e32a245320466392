package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/clocktest"
)

// A revocation refuses the subject's credentials issued up to it, not
// later ones; another api-server's cache learns it within the TTL; a
// failing store is an error, not a pass.
func TestRevocationsCheck(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	tk, _ := NewTokens(Config{Key: newKey}, clk)
	revoked := map[string]time.Time{}
	var lookups int
	var fail error
	rv := NewRevocations(func(_ context.Context, scope, subject string) (time.Time, error) {
		lookups++
		return revoked[scope+"/"+subject], fail
	}, 2*time.Second, clk)
	claims := func(tok string) *Claims {
		c, err := tk.Validate(tok)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	old := claims(must(tk.IssueWorker("w1", 0)))
	other := claims(must(tk.IssueWorker("w2", 0)))
	if err := rv.Check(t.Context(), old); err != nil {
		t.Fatalf("before any revocation: %v", err)
	}

	clk.Advance(time.Second)
	revoked["worker/w1"] = clk.Now() // revoked on another api-server
	if err := rv.Check(t.Context(), old); err != nil {
		t.Fatalf("within the TTL the cached answer stands: %v", err)
	}
	clk.Advance(2 * time.Second)
	err := rv.Check(t.Context(), old)
	if !errors.Is(err, core.ErrUnauthorized) || !strings.Contains(err.Error(), `"w1"`) {
		t.Fatalf("after the TTL: err = %v, want the revocation naming w1", err)
	}
	if err := rv.Check(t.Context(), other); err != nil {
		t.Errorf("another worker's credential: %v", err)
	}
	clk.Advance(time.Second)
	if err := rv.Check(t.Context(), claims(must(tk.IssueWorker("w1", 0)))); err != nil {
		t.Errorf("a credential issued after the revocation: %v", err)
	}
	n := lookups
	for range 10 {
		_ = rv.Check(t.Context(), old)
	}
	if lookups != n {
		t.Errorf("%d lookups for 10 checks within the TTL, want 0 (cached)", lookups-n)
	}

	clk.Advance(3 * time.Second)
	fail = errors.New("database down")
	if err := rv.Check(t.Context(), other); err == nil || errors.Is(err, core.ErrUnauthorized) {
		t.Errorf("failing lookup: err = %v, want the store's error", err)
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}

// A credential minted in the second of a revocation, after it, is valid
// (its issue time is kept to the millisecond); one minted in that second
// before it is revoked with it.
func TestACredentialMintedInTheSecondOfARevocation(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2026, 1, 2, 3, 4, 5, 100e6, time.UTC))
	tk, _ := NewTokens(Config{Key: newKey}, clk)
	var revokedAt time.Time
	rv := NewRevocations(func(context.Context, string, string) (time.Time, error) { return revokedAt, nil }, time.Nanosecond, clk)
	claims := func(tok string) *Claims {
		c, err := tk.Validate(tok)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	before := claims(must(tk.IssueWorker("w1", 0)))
	clk.Advance(300 * time.Millisecond)
	revokedAt = clk.Now()
	clk.Advance(300 * time.Millisecond) // still 03:04:05
	after := claims(must(tk.IssueWorker("w1", 0)))
	if err := rv.Check(t.Context(), before); !errors.Is(err, core.ErrUnauthorized) {
		t.Errorf("minted 300 ms before the revocation: %v, want revoked", err)
	}
	if err := rv.Check(t.Context(), after); err != nil {
		t.Errorf("minted 300 ms after the revocation, in its second: %v, want valid", err)
	}
}
