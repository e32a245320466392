package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// TestRemoteCLI is the CLI on a machine without the database (issue 12):
// `weir login` to a running standalone with the admin's password, then the
// admin commands reach it through its REST API — list, trigger, inspect
// the run — until `weir logout`, after which the same commands look for a
// local database again and find none.
func TestRemoteCLI(t *testing.T) {
	t.Parallel()
	server := t.TempDir()
	home := filepath.Join(server, "weir")
	port := weirtest.FreePort(t)
	p := weirtest.StartProc(t, weirBin, "standalone", []string{"HOME=" + server},
		"standalone", "--home", home, "--dags", examplesDir(), "--port", strconv.Itoa(port))
	base := p.WaitOutput(t, regexp.MustCompile(`API:\s+(http://\S+)/api/v2`))[1]
	newClient(t, base, "").WaitHealthy()
	password := strings.TrimSpace(readFile(t, filepath.Join(home, "secrets", "admin_password")))
	api := login(t, base, "admin", password)
	api.WaitDAG("noop_chain")

	laptop := t.TempDir() // another user, another home, no database
	shell := []string{"HOME=" + laptop, "XDG_CONFIG_HOME=" + filepath.Join(laptop, ".config"),
		"WEIR_HOME=" + filepath.Join(laptop, "weir")}
	weir := func(args ...string) result { return runWeir(t, shell, args...) }

	if r := weir("login", "--api-url", base, "--username", "admin", "--password", password); r.Code != 0 ||
		!strings.HasPrefix(r.Stdout, "logged in to "+base+" as admin (admin), token expires at ") {
		t.Fatalf("login: %s", r)
	}
	creds := filepath.Join(laptop, ".config", "weir", "credentials.json")
	if fi, err := os.Stat(creds); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials %s: %v (want mode 0600)", creds, err)
	}
	if r := weir("dags", "list"); r.Code != 0 || !regexp.MustCompile(`(?m)^noop_chain\s`).MatchString(r.Stdout) {
		t.Errorf("dags list through the API: %s", r)
	}
	if r := weir("dags", "trigger", "noop_chain", "--run-id", "remote"); r.Code != 0 ||
		r.Stdout != "created run remote of noop_chain (state queued)\n" {
		t.Errorf("dags trigger through the API: %s", r)
	}
	api.WaitRunSuccess("noop_chain", "remote")
	if r := weir("dags", "state", "noop_chain", "remote"); r.Code != 0 || r.Stdout != "success\n" {
		t.Errorf("dags state through the API: %s", r)
	}
	if r := weir("logout"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "logged out of "+base) {
		t.Errorf("logout: %s", r)
	}
	if r := weir("dags", "list"); r.Code != 1 || !strings.Contains(r.Stderr, "does not exist") {
		t.Errorf("dags list after logout: want the local database, which this machine lacks; %s", r)
	}
}
