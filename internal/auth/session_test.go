package auth

import (
	"errors"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/clocktest"
)

func TestSessionsSignVerifyCSRF(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	s := Sessions{Key: []byte("0123456789abcdef"), Clock: clk}
	other := Sessions{Key: []byte("fedcba9876543210"), Clock: clk}
	v := s.Sign("ana", clk.Now().Add(time.Hour))

	if u, err := s.Verify(v); err != nil || u != "ana" {
		t.Fatalf("Verify(own cookie) = %q, %v; want ana", u, err)
	}
	for name, bad := range map[string]string{
		"other key": other.Sign("ana", clk.Now().Add(time.Hour)),
		"tampered":  "Ym9i" + v[4:], // "bob" instead of "ana", same signature
		"garbage":   "x",
		"empty":     "",
	} {
		if _, err := s.Verify(bad); !errors.Is(err, core.ErrUnauthorized) || errors.Is(err, ErrSessionExpired) {
			t.Errorf("Verify(%s) error = %v, want not valid (unauthorized, not expired)", name, err)
		}
	}

	tok := s.CSRFToken(v)
	if !s.CheckCSRF(v, tok) {
		t.Error("CheckCSRF(own token) = false")
	}
	v2 := s.Sign("ana", clk.Now().Add(2*time.Hour))
	for name, c := range map[string][2]string{
		"other session": {v2, tok},
		"other key":     {v, other.CSRFToken(v)},
		"empty token":   {v, ""},
		"no session":    {"", s.CSRFToken("")},
	} {
		if s.CheckCSRF(c[0], c[1]) {
			t.Errorf("CheckCSRF(%s) = true, want false", name)
		}
	}

	clk.Advance(time.Hour)
	if _, err := s.Verify(v); !errors.Is(err, ErrSessionExpired) || !errors.Is(err, core.ErrUnauthorized) {
		t.Errorf("Verify after expiry error = %v, want expired and unauthorized", err)
	}
}
