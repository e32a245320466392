package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// standalone is a running `weir standalone` and an API client logged in as
// admin.
type standalone struct {
	*proc
	home string
	api  *client
}

// apiURLLine is the line standalone prints with the API's address.
var apiURLLine = regexp.MustCompile(`API:\s+(http://\S+)/api/v2`)

// startStandalone runs `weir standalone` on home with DAGs from dags, on a
// free port, and waits until it is healthy and admin has logged in.
func startStandalone(t *testing.T, home, dags string, env ...string) *standalone {
	t.Helper()
	p := startProc(t, "standalone", env, "standalone", "--home", home, "--dags", dags, "--port", "0")
	base := p.waitOutput(t, apiURLLine)[1]
	newClient(t, base, "").waitHealthy()
	password := strings.TrimSpace(readFile(t, filepath.Join(home, "secrets", "admin_password")))
	return &standalone{proc: p, home: home, api: login(t, base, "admin", password)}
}

// examplesDir is the repository's examples/dags folder.
func examplesDir() string { return filepath.Join(repoRoot, "examples", "dags") }

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(b)
}

// writeFile writes a file atomically (the DAG processor never sees half of it).
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
