package weirtest

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ReadFile returns a file's content, failing t if it cannot be read.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(b)
}

// WriteFile writes a file atomically (the DAG processor never sees half of it).
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil { //nolint:gosec // G306: a test's DAG file, read by the weir processes it starts
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Standalone is a running `weir standalone` and an API client logged in as
// admin.
type Standalone struct {
	*Proc
	Home string
	API  *Client
}

// apiURLLine is the line standalone prints with the API's address.
var apiURLLine = regexp.MustCompile(`API:\s+(http://\S+)/api/v2`)

// StartStandalone runs `bin standalone` on home with DAGs from dags, on a
// free port, and waits until it is healthy and admin has logged in.
func StartStandalone(t testing.TB, bin, home, dags string, env ...string) *Standalone {
	t.Helper()
	p := StartProc(t, bin, "standalone", env, "standalone", "--home", home, "--dags", dags, "--port", "0")
	base := p.WaitOutput(t, apiURLLine)[1]
	NewClient(t, base, "").WaitHealthy()
	password := strings.TrimSpace(ReadFile(t, filepath.Join(home, "secrets", "admin_password")))
	return &Standalone{Proc: p, Home: home, API: Login(t, base, "admin", password)}
}
