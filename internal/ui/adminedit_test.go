package ui

import (
	"errors"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

func TestParseTTL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"": 0, "0": 0, " 30d ": 30 * 24 * time.Hour, "12h": 12 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := parseTTL(in); err != nil || got != want {
			t.Errorf("parseTTL(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"soon", "-1h", "0d", "-3d", "1.5d", "d"} {
		if _, err := parseTTL(in); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("parseTTL(%q) error = %v, want ErrInvalid", in, err)
		}
	}
}
