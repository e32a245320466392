package auth

import (
	"testing"
	"time"

	"github.com/weirflow/weir/internal/testutil/clocktest"
)

func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	th := NewLoginThrottle(ThrottleConfig{Free: 3, Base: time.Second, Max: 8 * time.Second, Forget: time.Hour}, clk)
	fail := func(n int, user, addr string) {
		for range n {
			th.Failed(user, addr)
		}
	}
	fail(2, "ada", "10.0.0.1")
	if w := th.Wait("ada", "10.0.0.1"); w != 0 {
		t.Fatalf("after 2 failures: wait %v, want none", w)
	}
	fail(1, "ada", "10.0.0.1") // the 3rd: 1 s
	for _, tc := range []struct {
		user, addr string
		want       time.Duration
	}{
		{"ada", "10.0.0.1", time.Second},
		{"ada", "10.0.0.2", time.Second}, // the user is locked from every address
		{"bob", "10.0.0.1", time.Second}, // and the address for every user
		{"bob", "10.0.0.2", 0},
	} {
		if w := th.Wait(tc.user, tc.addr); w != tc.want {
			t.Errorf("Wait(%s, %s) = %v, want %v", tc.user, tc.addr, w, tc.want)
		}
	}
	fail(3, "ada", "10.0.0.1") // 4th: 2 s, 5th: 4 s, 6th: 8 s
	if w := th.Wait("ada", "x"); w != 8*time.Second {
		t.Fatalf("after 6 failures: wait %v, want 8s", w)
	}
	fail(5, "ada", "10.0.0.1")
	if w := th.Wait("ada", "x"); w != 8*time.Second {
		t.Fatalf("wait grew past Max: %v", w)
	}
	clk.Advance(8 * time.Second)
	if w := th.Wait("ada", "x"); w != 0 {
		t.Fatalf("after the wait: %v, want none", w)
	}
	th.Succeeded("ada", "10.0.0.1")
	fail(1, "ada", "10.0.0.1")
	if w := th.Wait("ada", "10.0.0.1"); w != 0 {
		t.Fatalf("a success did not reset the count: wait %v", w)
	}
	// Failures older than Forget are forgotten.
	fail(2, "cy", "a")
	clk.Advance(2 * time.Hour)
	fail(1, "cy", "b")
	if w := th.Wait("cy", "b"); w != 0 {
		t.Fatalf("old failures still count: wait %v", w)
	}
}
