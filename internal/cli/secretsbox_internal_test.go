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
