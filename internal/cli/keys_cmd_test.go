package cli_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
)

// weirRun runs the CLI in-process and returns its exit code, stdout and stderr.
func weirRun(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Run(t.Context(), args, cli.Options{Stdout: &out, Stderr: &errOut, Environ: env})
	return code, out.String(), errOut.String()
}

// verifierOf builds the token checker an api-server on this key file has.
func verifierOf(t *testing.T, path string) *auth.Tokens {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := config.SplitKeys(string(b), config.MinJWTKeyLen)
	if err != nil {
		t.Fatal(err)
	}
	raw := make([][]byte, len(keys))
	for i, k := range keys {
		raw[i] = []byte(k)
	}
	tk, err := auth.NewTokens(auth.Config{Key: raw[0], VerifyKeys: raw[1:]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// A fleet's rotation, step by step: a worker credential signed before the
// rotation stays valid while its key verifies, new credentials carry the
// new key's id, and removing the old key refuses the old credential by id.
func TestKeysRotateStepByStep(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := []string{"WEIR_HOME=" + home, "USER=tester"}
	ok := func(args ...string) string {
		t.Helper()
		code, out, errOut := weirRun(t, env, args...)
		if code != 0 {
			t.Fatalf("weir %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		return out
	}
	file := filepath.Join(home, "secrets", "jwt_secret")
	old := strings.TrimSpace(ok("tokens", "create", "--worker", "w1"))
	oldID := strings.Fields(ok("keys", "list"))[0]
	if kid := auth.KeyID(mustRead(t, file)); kid != oldID {
		t.Fatalf("keys list = %s, want the file's key %s", oldID, kid)
	}

	ok("keys", "add")
	lines := strings.Split(strings.TrimSpace(ok("keys", "list")), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], oldID+"\tsigns") || !strings.HasSuffix(lines[1], "\tverifies") {
		t.Fatalf("after add, keys list =\n%s\nwant the old key signing, a new one verifying", strings.Join(lines, "\n"))
	}
	newID := strings.Fields(lines[1])[0]
	if tk := verifierOf(t, file); tk.SigningKeyID() != oldID {
		t.Fatalf("after add the signing key is %s, want still %s", tk.SigningKeyID(), oldID)
	}

	ok("keys", "promote", newID)
	fresh := strings.TrimSpace(ok("tokens", "create", "--worker", "w2"))
	tk := verifierOf(t, file)
	if tk.SigningKeyID() != newID {
		t.Fatalf("after promote the signing key is %s, want %s", tk.SigningKeyID(), newID)
	}
	for name, tok := range map[string]string{"old credential": old, "new credential": fresh} {
		if _, err := tk.Validate(tok); err != nil {
			t.Errorf("%s during the rotation: %v", name, err)
		}
	}

	if code, _, errOut := weirRun(t, env, "keys", "remove", newID); code == 0 || !strings.Contains(errOut, "signing key") {
		t.Errorf("removing the signing key: exit %d, %s; want refused", code, errOut)
	}
	if code, _, errOut := weirRun(t, env, "keys", "remove", "nosuchid"); code == 0 || !strings.Contains(errOut, oldID) {
		t.Errorf("removing an unknown id: exit %d, %s; want refused listing the ids", code, errOut)
	}
	ok("keys", "remove", oldID)
	tk = verifierOf(t, file)
	if _, err := tk.Validate(old); !errors.Is(err, core.ErrUnauthorized) || !strings.Contains(err.Error(), oldID) {
		t.Errorf("old credential after the old key's removal: %v, want refused naming %s", err, oldID)
	}
	if _, err := tk.Validate(fresh); err != nil {
		t.Errorf("new credential after the old key's removal: %v", err)
	}
	if info, err := os.Stat(file); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %v, %v; want 0600", info.Mode().Perm(), err)
	}
}

// Keys given in the environment sign and verify; the file is not used and
// the commands that edit it refuse, changing nothing. A bad value names the
// option, never the key.
func TestKeysFromEnvironment(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	k1, k2 := strings.Repeat("1", 40), strings.Repeat("2", 40)
	env := []string{"WEIR_HOME=" + home, "USER=tester", "WEIR__API_AUTH__JWT_SECRET=" + k1 + "," + k2}
	code, out, errOut := weirRun(t, env, "tokens", "create", "--worker", "w1")
	if code != 0 {
		t.Fatalf("tokens create: %s", errOut)
	}
	tk, _ := auth.NewTokens(auth.Config{Key: []byte(k2), VerifyKeys: [][]byte{[]byte(k1)}}, nil)
	if _, err := tk.Validate(strings.TrimSpace(out)); err != nil {
		t.Errorf("credential minted from the environment's keys: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, "secrets", "jwt_secret")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a key file was created although the keys came from the environment (%v)", err)
	}
	if code, _, errOut := weirRun(t, env, "keys", "rotate"); code == 0 || !strings.Contains(errOut, "WEIR__API_AUTH__JWT_SECRET") {
		t.Errorf("keys rotate with inline keys: exit %d, %s; want refused naming the variable", code, errOut)
	}
	if _, list, _ := weirRun(t, env, "config", "list"); strings.Contains(list, k1) || !strings.Contains(list, "***") {
		t.Errorf("config list shows the key or no mask:\n%s", list)
	}

	bad := []string{"WEIR_HOME=" + home, "WEIR__API_AUTH__JWT_SECRET=" + k1 + ",short"}
	code, _, errOut = weirRun(t, bad, "tokens", "create", "--worker", "w1")
	if code == 0 || !strings.Contains(errOut, "[api_auth] jwt_secret: key 2 is 5 characters") || strings.Contains(errOut, k1) {
		t.Errorf("short inline key: exit %d, %q; want an error naming the option and key 2, not the keys", code, errOut)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.TrimSpace(string(b)))
}
