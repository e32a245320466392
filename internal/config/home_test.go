package config

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The home holds the database and secrets: a new one is the owner's alone,
// and an existing one others could read is tightened and logged (issue 13,
// finding 4).
func TestInitHomeIsOwnerOnly(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "weir")
	if err := InitHome(home, nil, nil); err != nil {
		t.Fatal(err)
	}
	mode := func(p string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	if got := mode(home); got != HomeMode {
		t.Fatalf("new home has mode %v, want %v", got, HomeMode)
	}
	if got := mode(filepath.Join(home, "secrets")); got != HomeMode {
		t.Fatalf("secrets has mode %v, want %v", got, HomeMode)
	}

	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	if err := InitHome(home, nil, slog.New(slog.NewTextHandler(&logged, nil))); err != nil {
		t.Fatal(err)
	}
	if got := mode(home); got != HomeMode {
		t.Fatalf("existing 0755 home left at %v, want %v", got, HomeMode)
	}
	if !strings.Contains(logged.String(), "tightened the mode of a path others could read") || !strings.Contains(logged.String(), home) {
		t.Fatalf("tightening not logged: %s", logged.String())
	}
}
