package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
)

// Password guessing is throttled: after 5 failures for a user (or from an
// address) the next attempt, even with the right password, is answered
// 429 with Retry-After, and the wait doubles (issue 13: 40 wrong passwords
// took 5 s with no throttle).
func TestLoginThrottled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hash, err := auth.HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	e.addUser("alice", core.RoleOp, hash)
	type answer struct {
		StatusCode int
		Header     http.Header
	}
	login := func(user, password string) answer {
		t.Helper()
		resp := e.request(core.RolePublic, "POST", "/api/v2/auth/login", map[string]string{"username": user, "password": password})
		_ = resp.Body.Close()
		return answer{resp.StatusCode, resp.Header}
	}
	for i := range 5 {
		if resp := login("alice", "guess"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d, want 401", i+1, resp.StatusCode)
		}
	}
	e.mustProblem(http.StatusTooManyRequests, core.RolePublic, "POST", "/api/v2/auth/login",
		map[string]string{"username": "alice", "password": "s3cret"}, "too many failed logins", "try again in 1 s")
	if resp := login("alice", "s3cret"); resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After = %q, want 1", resp.Header.Get("Retry-After"))
	}
	// The address is throttled too: another user from it waits as well.
	if resp := login("bob", "x"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("another user from the same address: %d, want 429", resp.StatusCode)
	}

	e.clk.Advance(time.Second)
	if resp := login("alice", "guess"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("after the wait: %d, want 401", resp.StatusCode)
	}
	if resp := login("alice", "s3cret"); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "2" {
		t.Fatalf("after a 6th failure: %d Retry-After %q, want 429 and 2 s", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	e.clk.Advance(2 * time.Second)
	if resp := login("alice", "s3cret"); resp.StatusCode != http.StatusOK {
		t.Fatalf("right password after the wait: %d, want 200", resp.StatusCode)
	}
	if resp := login("alice", "guess"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a success resets the count: %d, want 401", resp.StatusCode)
	}
}
