package execclient

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadCARefusesBadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ path, says string }{
		"missing": {filepath.Join(dir, "nope.pem"), "nope.pem"},
		"not PEM": {notPEM, "holds no PEM certificate"},
	} {
		if _, err := LoadCA(tc.path); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: err = %v, want one saying %q", name, err, tc.says)
		}
	}
	if _, err := clientFromLookup(func(k string) (string, bool) {
		return map[string]string{EnvAPIURL: "https://x", EnvToken: "t", EnvCAFile: notPEM}[k], true
	}); err == nil || !strings.Contains(err.Error(), EnvCAFile) {
		t.Errorf("in-task CLI with a bad CA file: err = %v, want one naming %s", err, EnvCAFile)
	}
}
