package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/secrets"
)

// A process's secrets box reads its key file again for a value sealed
// under a key added to the file since it started: after `weir connections
// rotate-key` on the same machine, a running api-server reads the
// re-encrypted connections and variables without a restart.
func TestTheSecretsBoxReadsARotatedKeyFile(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Core: config.Core{SecretsKeyFile: filepath.Join(t.TempDir(), "connections_key")}}
	box, err := secretsBox(cfg) // creates the file with one key
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(cfg.Core.SecretsKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	newKey := secrets.NewKey()
	if err := os.WriteFile(cfg.Core.SecretsKeyFile, []byte(newKey+"\n"+string(old)), 0o600); err != nil {
		t.Fatal(err)
	}
	rotated, err := secretsBox(cfg) // what rotate-key seals with
	if err != nil {
		t.Fatal(err)
	}
	sealed := rotated.Seal("postgres://u:pw@h/d", "wh")
	if got, err := box.Open(sealed, "wh"); err != nil || got != "postgres://u:pw@h/d" {
		t.Errorf("the running box opened the rotated value as %q, %v; want it read", got, err)
	}
}

// A reload reads the key file as it is: a file gone (deleted by mistake)
// is not made again with a new key, which no other node has and which
// would replace the keys this process holds.
func TestTheSecretsBoxDoesNotMakeAKeyFileOnReload(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Core: config.Core{SecretsKeyFile: filepath.Join(t.TempDir(), "connections_key")}}
	box, err := secretsBox(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sealed := box.Seal("v", "c")
	if err := os.Remove(cfg.Core.SecretsKeyFile); err != nil {
		t.Fatal(err)
	}
	stray, err := secrets.New([][]byte{[]byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := box.Open(stray.Seal("x", "c"), "c"); err == nil {
		t.Fatal("a value under a key in no file opened")
	}
	if _, err := os.Stat(cfg.Core.SecretsKeyFile); err == nil {
		t.Error("the reload made a new key file")
	}
	if got, err := box.Open(sealed, "c"); err != nil || got != "v" {
		t.Errorf("the box's own value after the failed reload = %q, %v; want it read", got, err)
	}
}
