package cli_test

import (
	"encoding/json"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// `weir login` stores a token 0600 in the user's configuration folder,
// whatever WEIR_HOME is; the admin commands then reach that deployment
// (here from a home without a database); `weir logout` forgets it. A
// credentials file others may read is refused, for reading and writing.
func TestLoginLogout(t *testing.T) {
	t.Parallel()
	s := newSurfaces(t, "sqlite")
	cfgDir := t.TempDir()
	env := []string{"WEIR_HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + cfgDir, "USER=tester"}
	creds := filepath.Join(cfgDir, "weir", "credentials.json")

	// Without a login the empty home has no database.
	if _, errOut, code := weirIn(t, env, "", "dags", "list"); code != 1 || !strings.Contains(errOut, "does not exist") {
		t.Fatalf("dags list before login: exit %d %q", code, errOut)
	}
	// A wrong password stores nothing.
	_, errOut, code := weirIn(t, env, "", "login", "--api-url", s.srv.URL, "--username", "otto", "--password", "nope")
	if code != 1 || !strings.Contains(errOut, `log in to `+s.srv.URL+` as "otto": invalid username or password`) {
		t.Errorf("bad password: exit %d %q", code, errOut)
	}
	if _, err := os.Stat(creds); !os.IsNotExist(err) {
		t.Fatalf("a failed login left %s (%v)", creds, err)
	}

	// --password-stdin: the password from stdin's first line, with --username.
	if _, errOut, code := weirIn(t, env, "pw\n", "login", "--api-url", s.srv.URL, "--password-stdin"); code != 1 ||
		!strings.Contains(errOut, "--password-stdin goes with --username") {
		t.Errorf("--password-stdin without --username: exit %d %q", code, errOut)
	}
	if out, errOut, code := weirIn(t, env, "pw\n", "login", "--api-url", s.srv.URL, "--username", "otto", "--password-stdin"); code != 0 ||
		!strings.HasPrefix(out, "logged in to "+s.srv.URL+" as otto (admin)") || errOut != "" {
		t.Fatalf("login --password-stdin: exit %d %q %q", code, out, errOut)
	}
	// Username and password asked for on stdin.
	out, errOut, code := weirIn(t, env, "otto\npw\n", "login", "--api-url", s.srv.URL+"/api/v2/")
	if code != 0 || !strings.HasPrefix(out, "logged in to "+s.srv.URL+" as otto (admin), token expires at ") ||
		!strings.HasSuffix(out, "; credentials stored in "+creds+"\n") || errOut != "Username: Password: " {
		t.Fatalf("login: exit %d %q %q", code, out, errOut)
	}
	if fi, err := os.Stat(creds); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials %s: %v, mode %v; want 0600", creds, err, fi.Mode())
	}
	if out, _, code := weirIn(t, env, "", "login", "--status"); code != 0 || !strings.HasPrefix(out, "logged in to "+s.srv.URL+" as otto (admin)") {
		t.Errorf("login --status: exit %d %q", code, out)
	}
	if out, errOut, code := weirIn(t, env, "", "dags", "pause", "etl"); code != 0 || out != "dag etl is paused\n" {
		t.Fatalf("dags pause through the login: exit %d %q %q", code, out, errOut)
	}
	if e := s.lastAudit(); e.User != "otto" || e.Action != "dag.pause" {
		t.Errorf("last audit entry %+v, want otto's dag.pause (through the API)", e)
	}
	// --api-url naming another deployment than the login is refused.
	if _, errOut, code := weirIn(t, env, "", "dags", "list", "--api-url", "http://other.example:8080"); code != 1 ||
		!strings.Contains(errOut, "is not the one logged in to") {
		t.Errorf("dags list --api-url other: exit %d %q", code, errOut)
	}

	// A file others may read is neither used nor overwritten.
	if err := os.Chmod(creds, 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(creds)
	for _, args := range [][]string{{"dags", "list"}, {"login", "--api-url", s.srv.URL, "--token", s.token}} {
		if _, errOut, code := weirIn(t, env, "", args...); code != 1 || !strings.Contains(errOut, "have mode 0644, readable or writable by others") ||
			!strings.Contains(errOut, "chmod 600 "+creds) {
			t.Errorf("weir %s with a 0644 credentials file: exit %d %q", strings.Join(args, " "), code, errOut)
		}
	}
	if after, _ := os.ReadFile(creds); string(after) != string(before) {
		t.Error("the refused login changed the credentials file")
	}
	if err := os.Chmod(creds, 0o600); err != nil {
		t.Fatal(err)
	}

	// A token from `weir tokens create` instead of a password: no expiry.
	if out, _, code := weirIn(t, env, "", "login", "--api-url", s.srv.URL, "--token", s.token); code != 0 ||
		out != "logged in to "+s.srv.URL+" as otto (admin); credentials stored in "+creds+"\n" {
		t.Errorf("login --token: exit %d %q", code, out)
	}
	if out, _, code := weirIn(t, env, "", "logout"); code != 0 || out != "logged out of "+s.srv.URL+" (removed "+creds+")\n" {
		t.Errorf("logout: exit %d %q", code, out)
	}
	if _, err := os.Stat(creds); !os.IsNotExist(err) {
		t.Errorf("logout left %s", creds)
	}
	if _, errOut, code := weirIn(t, env, "", "login", "--status"); code != 1 || !strings.Contains(errOut, "not logged in") {
		t.Errorf("login --status after logout: exit %d %q", code, errOut)
	}
}

// Remote mode's failures say what to do: an api-server that does not
// answer, an expired token (log in again), a role without the permission,
// and a command that has no remote transport yet; none falls back to a
// local database.
func TestRemoteErrors(t *testing.T) {
	t.Parallel()
	s := newSurfaces(t, "sqlite")
	ctx := t.Context()
	svc := service.New(service.Config{Store: s.st})
	if err := svc.SaveUser(ctx, core.System, "vic", "pw", core.RoleViewer); err != nil {
		t.Fatal(err)
	}
	viewer, err := svc.CreateAPIToken(ctx, core.System, "vic", "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	expired, err := svc.CreateAPIToken(ctx, core.System, "otto", "short", 1) // 1 ns: expired by the first request
	if err != nil {
		t.Fatal(err)
	}
	gone := httptest.NewServer(nil)
	gone.Close()

	cases := []struct {
		name, url, token string
		args             []string
		want             string
	}{
		{"unreachable", gone.URL, s.token, []string{"dags", "list"},
			"cannot reach the Weir API at " + gone.URL + " (dial tcp"},
		{"expired", s.srv.URL, expired, []string{"runs", "list"},
			`the Weir API at ` + s.srv.URL + ` refused the credentials (API token "short" expired at `},
		{"expired says log in", s.srv.URL, expired, []string{"runs", "list"}, "log in again with `weir login --api-url " + s.srv.URL + "`"},
		{"role", s.srv.URL, viewer, []string{"dags", "trigger", "etl"},
			`permission denied: user "vic" has role "viewer"; POST /api/v2/dags/{dag_id}/dagRuns needs role "op" or higher`},
		{"bad url", "ftp://x", s.token, []string{"pools", "list"}, `API URL "ftp://x": want http://HOST[:PORT]`},
		{"state of a whole DAG", s.srv.URL, s.token, []string{"state-store", "list", "--dag", "etl"},
			"through the REST API state-store list needs --dag, --run and --task (one task instance) or --asset"},
	}
	for _, c := range cases {
		env := append(append([]string{}, s.env...), "WEIR_API_URL="+c.url, "WEIR_API_TOKEN="+c.token)
		out, errOut, code := weirIn(t, env, "", c.args...)
		if code != 1 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: weir %s: exit %d %q %q, want %q", c.name, strings.Join(c.args, " "), code, out, errOut, c.want)
		}
	}
	// A command with no remote form refuses as a command line this CLI
	// cannot carry out (exit 2), never falling back to the local database.
	env := append(append([]string{}, s.env...), "WEIR_API_URL="+s.srv.URL, "WEIR_API_TOKEN="+s.token)
	out, errOut, code := weirIn(t, env, "", "state-store", "clean", "--dry-run")
	if code != cli.ExitUsage || out != "" || !strings.Contains(errOut, "`weir state-store cleanup-task-store` has no remote form: it works only on the local database") {
		t.Errorf("state-store clean remotely: exit %d %q %q", code, out, errOut)
	}
	if n, err := s.st.DagRunCount(ctx, &store.DagRunListParams{}); err != nil || n != 0 {
		t.Errorf("the refused trigger created %d runs (err %v)", n, err)
	}
}

// Remote mode over https with a private CA: without the CA the login fails
// naming the certificate problem; `weir login --ca-file` stores the CA and
// the admin commands use it; `[workers] tls_ca_file`
// (WEIR__WORKERS__TLS_CA_FILE) serves the same with WEIR_API_URL and
// WEIR_API_TOKEN. `weir logout` revokes the token a password login issued,
// so it no longer works anywhere.
func TestRemoteTLSAndLogoutRevokes(t *testing.T) {
	t.Parallel()
	s := newSurfaces(t, "sqlite")
	tlsSrv := httptest.NewTLSServer(s.srv.Config.Handler)
	t.Cleanup(tlsSrv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgDir := t.TempDir()
	env := []string{"WEIR_HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + cfgDir, "USER=tester"}

	if _, errOut, code := weirIn(t, env, "", "login", "--api-url", tlsSrv.URL, "--username", "otto", "--password", "pw"); code != 1 ||
		!strings.Contains(errOut, "cannot reach the Weir API at "+tlsSrv.URL) || !strings.Contains(errOut, "certificate") {
		t.Errorf("login without the CA: exit %d %q", code, errOut)
	}
	if out, errOut, code := weirIn(t, env, "", "login", "--api-url", tlsSrv.URL, "--username", "otto", "--password", "pw", "--ca-file", ca); code != 0 ||
		!strings.HasPrefix(out, "logged in to "+tlsSrv.URL+" as otto") {
		t.Fatalf("login --ca-file: exit %d %q %q", code, out, errOut)
	}
	if out, errOut, code := weirIn(t, env, "", "dags", "list", "-o", "plain"); code != 0 || !strings.Contains(out, "etl") {
		t.Errorf("dags list over https with the stored CA: exit %d %q %q", code, out, errOut)
	}
	raw, err := os.ReadFile(filepath.Join(cfgDir, "weir", "credentials.json"))
	if err != nil {
		t.Fatal(err)
	}
	var creds struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(raw, &creds); err != nil {
		t.Fatal(err)
	}
	viaConfig := append([]string{"WEIR_HOME=" + t.TempDir(), "USER=tester", "WEIR_API_URL=" + tlsSrv.URL, "WEIR_API_TOKEN=" + creds.Token},
		"WEIR__WORKERS__TLS_CA_FILE="+ca)
	if out, errOut, code := weirIn(t, viaConfig, "", "pools", "list", "-o", "plain"); code != 0 || !strings.Contains(out, "default_pool") {
		t.Errorf("pools list with [workers] tls_ca_file: exit %d %q %q", code, out, errOut)
	}

	if out, errOut, code := weirIn(t, env, "", "logout"); code != 0 || !strings.Contains(out, "the login's token is revoked") {
		t.Errorf("logout: exit %d %q %q", code, out, errOut)
	}
	if _, errOut, code := weirIn(t, viaConfig, "", "pools", "list"); code != 1 || !strings.Contains(errOut, "refused the credentials") {
		t.Errorf("the logged-out token still works: exit %d %q", code, errOut)
	}
	if e := s.lastAudit(); e.User != "otto" || e.Action != "api_token.revoke" {
		t.Errorf("last audit entry %+v, want otto's api_token.revoke", e)
	}
}
