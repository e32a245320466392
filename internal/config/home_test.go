package config

import (
	"bytes"
	"errors"
	"io/fs"
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

// Every role tightens what holds its secrets, whatever the database: the
// home and its secrets folder to 0700, key files named anywhere to 0600,
// with a warning naming each; what is missing stays missing.
func TestTightenSecrets(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	keys := t.TempDir()
	cfg := Defaults(home)
	cfg.Core.SecretsKeyFile = filepath.Join(keys, "connections_key")
	if err := os.MkdirAll(filepath.Join(home, "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{cfg.Core.SecretsKeyFile, cfg.APIAuth.JWTSecretFile} {
		if err := os.WriteFile(f, []byte("k\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{home, filepath.Join(home, "secrets")} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var logs bytes.Buffer
	cfg.TightenSecrets(slog.New(slog.NewTextHandler(&logs, nil)))
	for path, want := range map[string]fs.FileMode{home: 0o700, filepath.Join(home, "secrets"): 0o700,
		cfg.Core.SecretsKeyFile: 0o600, cfg.APIAuth.JWTSecretFile: 0o600} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want || !strings.Contains(logs.String(), path) {
			t.Errorf("%s: mode %v (%v), want %v and a warning naming it; logs:\n%s", path, fi.Mode().Perm(), err, want, logs.String())
		}
	}
	if _, err := os.Stat(cfg.APIAuth.SecretKeyFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing key file was created: %v", err)
	}
}
