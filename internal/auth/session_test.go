package auth

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
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
	ana := Session{Username: "ana", Epoch: 3, ID: NewSessionID()}
	v := s.Sign(ana, clk.Now().Add(time.Hour))

	ana.Expires = time.Unix(clk.Now().Add(time.Hour).Unix(), 0)
	if got, err := s.Verify(v); err != nil || got != ana {
		t.Fatalf("Verify(own cookie) = %+v, %v; want %+v", got, err, ana)
	}
	for name, bad := range map[string]string{
		"other key":   other.Sign(ana, clk.Now().Add(time.Hour)),
		"tampered":    "Ym9i" + v[4:], // "bob" instead of "ana", same signature
		"other epoch": strings.Replace(v, ".3.", ".4.", 1),
		"other id":    strings.Replace(v, "."+ana.ID+".", "."+NewSessionID()+".", 1),
		"garbage":     "x",
		"empty":       "",
	} {
		if _, err := s.Verify(bad); !errors.Is(err, core.ErrUnauthorized) || errors.Is(err, ErrSessionExpired) {
			t.Errorf("Verify(%s) error = %v, want not valid (unauthorized, not expired)", name, err)
		}
	}

	tok := s.CSRFToken(v)
	if !s.CheckCSRF(v, tok) {
		t.Error("CheckCSRF(own token) = false")
	}
	v2 := s.Sign(ana, clk.Now().Add(2*time.Hour))
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

// A cookie signed before session epochs ("<user>.<expiry>.<HMAC>") still
// verifies, as epoch 0: an upgrade logs nobody out.
func TestSessionsOfBeforeEpochsAreEpochZero(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	s := Sessions{Key: []byte("0123456789abcdef"), Clock: clk}
	payload := base64.RawURLEncoding.EncodeToString([]byte("ana")) + "." + strconv.FormatInt(clk.Now().Add(time.Hour).Unix(), 10)
	old := payload + "." + base64.RawURLEncoding.EncodeToString(s.mac("weir-session", payload))
	if got, err := s.Verify(old); err != nil || got.Username != "ana" || got.Epoch != 0 || got.ID != "" {
		t.Errorf("Verify(a cookie of before epochs) = %+v, %v; want ana at epoch 0, without an id", got, err)
	}
	withEpoch := s.Sign(Session{Username: "ana", Epoch: 2}, clk.Now().Add(time.Hour)) // before ids
	if got, err := s.Verify(withEpoch); err != nil || got.Epoch != 2 || got.ID != "" {
		t.Errorf("Verify(a cookie of before ids) = %+v, %v; want epoch 2, without an id", got, err)
	}
}
