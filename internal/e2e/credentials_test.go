package e2e

import (
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// TestCredentialsAcrossAPIServers runs two api-servers on one PostgreSQL
// database, as two machines would: separate homes, the signing keys given
// to both in the environment (docs/security.md#shared-keys-and-rotation).
// Worker credentials minted on a third home with those keys are accepted
// by both; a revoked worker credential is refused by both and its worker
// exits with an error naming the revocation, as do workers whose
// credential was signed with another key or has expired; a revoked API
// token is refused by both at once.
func TestCredentialsAcrossAPIServers(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	dags := t.TempDir()
	writeFile(t, filepath.Join(dags, "hello.yaml"), "dag_id: hello\nschedule: null\ntasks:\n  - task_id: say\n    operator: bash\n    bash_command: echo hello\n")
	shared := []string{"WEIR__DATABASE__CONN=" + dsn,
		"WEIR__API_AUTH__JWT_SECRET=" + strings.Repeat("e2e-jwt-key-", 4), "WEIR__API_AUTH__SECRET_KEY=" + strings.Repeat("e2e-session-", 2)}
	withEnv := func(extra ...string) []string { return append(append([]string{}, shared...), extra...) }
	homeA, homeB := t.TempDir(), t.TempDir()
	baseA, envA := apiServerEnv(t, withEnv)
	baseB, envB := apiServerEnv(t, withEnv)
	mustWeir(t, envA, "db", "migrate", "--home", homeA)
	mustWeir(t, envA, "users", "create", "--username", "admin", "--role", "admin", "--password", "e2e-secret", "--home", homeA)
	startProc(t, "api-server A", envA, "api-server", "--home", homeA)
	startProc(t, "api-server B", envB, "api-server", "--home", homeB)
	startProc(t, "scheduler", envA, "scheduler", "--home", homeA, "--dags", dags)
	newClient(t, baseA, "").WaitHealthy()
	newClient(t, baseB, "").WaitHealthy()

	// Worker credentials minted on another machine that has the same keys.
	mint := func(env []string, args ...string) string {
		return strings.TrimSpace(mustWeir(t, env, append([]string{"tokens", "create", "--home", t.TempDir()}, args...)...))
	}
	creds := map[string]string{"w1": mint(shared, "--worker", "w1"), "w2": mint(shared, "--worker", "w2")}
	workers := map[string]*proc{}
	for name, base := range map[string]string{"w1": baseB, "w2": baseA} {
		workers[name] = startProc(t, "worker "+name, shared, "worker", "--home", t.TempDir(), "--api-url", base, "--token", creds[name])
	}
	// Workers that must exit: a credential of another key, one that expires.
	otherKey := mint([]string{"WEIR__API_AUTH__JWT_SECRET=" + strings.Repeat("not-the-key-", 4)}, "--worker", "w3")
	wrongKey := startProc(t, "worker w3", shared, "worker", "--home", t.TempDir(), "--api-url", baseA, "--token", otherKey)
	expiring := startProc(t, "worker w4", shared, "worker", "--home", t.TempDir(), "--api-url", baseB,
		"--token", mint(shared, "--worker", "w4", "--ttl", "1s"))

	admin := login(t, baseA, "admin", "e2e-secret")
	admin.WaitDAG("hello")
	admin.Trigger("hello", "before", nil)
	admin.WaitRunSuccess("hello", "before")

	claims := func(base, cred string) func() (bool, string) { // 401 on a claim of no queue's work
		return func() (bool, string) {
			status, body, err := newClient(t, base, cred).Try(http.MethodPost, "/execution/workloads/claim",
				execclient.ClaimRequest{Queues: []string{"nothing-queued-here"}, Limit: 1})
			if err != nil {
				t.Fatalf("claim on %s: %v", base, err)
			}
			return status == http.StatusUnauthorized, strconv.Itoa(status) + " " + string(body)
		}
	}
	revoked := time.Now()
	if status, body := admin.Do(http.MethodDelete, "/api/v2/auth/workerCredentials/w1", nil); status != http.StatusNoContent {
		t.Fatalf("revoke w1: %d %s", status, body)
	}
	for _, base := range []string{baseA, baseB} {
		waitFor(t, "w1's credential to be refused by "+base, claims(base, creds["w1"]))
		if refused, status := claims(base, creds["w2"])(); refused {
			t.Errorf("w2's credential refused by %s after w1's revocation: %s", base, status)
		}
	}
	if code := workers["w1"].WaitExit(t); code == 0 || !strings.Contains(workers["w1"].Output(), "refused the worker credential") ||
		!strings.Contains(workers["w1"].Output(), "revoked") {
		t.Errorf("revoked worker w1 exited %d, want an error naming the revocation; output:\n%s", code, workers["w1"].Output())
	}
	t.Logf("worker w1 exited %s after its credential was revoked", time.Since(revoked).Round(time.Millisecond))
	for name, p := range map[string]*proc{"w3 (other key)": wrongKey, "w4 (expired)": expiring} {
		want := map[string]string{"w3 (other key)": "not one of this api-server's", "w4 (expired)": "expired"}[name]
		if code := p.WaitExit(t); code == 0 || !strings.Contains(p.Output(), "refused the worker credential") || !strings.Contains(p.Output(), want) {
			t.Errorf("worker %s exited %d, want an error saying %q; output:\n%s", name, code, want, p.Output())
		}
	}

	admin.Trigger("hello", "after", nil) // w2 alone runs it
	admin.WaitRunSuccess("hello", "after")
	if workers["w2"].Exited() {
		t.Fatalf("worker w2 exited:\n%s", workers["w2"].Output())
	}

	// An API token works on both api-servers until revoked, then on neither.
	secret := strings.TrimSpace(mustWeir(t, envA, "tokens", "create", "--user", "admin", "--name", "script", "--home", homeA))
	var id string
	for _, line := range strings.Split(mustWeir(t, envA, "tokens", "list", "--home", homeA), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == "script" {
			id = f[0]
		}
	}
	for _, base := range []string{baseA, baseB} {
		if status, body := newClient(t, base, secret).Do(http.MethodGet, "/api/v2/dags", nil); status != http.StatusOK {
			t.Fatalf("API token on %s before revocation: %d %s", base, status, body)
		}
	}
	mustWeir(t, envA, "tokens", "revoke", id, "--home", homeA)
	for _, base := range []string{baseA, baseB} {
		if status, body := newClient(t, base, secret).Do(http.MethodGet, "/api/v2/dags", nil); status != http.StatusUnauthorized {
			t.Errorf("revoked API token on %s: %d %s, want 401", base, status, body)
		}
	}
}

// apiServerEnv picks a free port for one api-server and returns its base
// URL and environment.
func apiServerEnv(t *testing.T, withEnv func(...string) []string) (string, []string) {
	port := weirtest.FreePort(t)
	return "http://127.0.0.1:" + strconv.Itoa(port), withEnv("WEIR__API__PORT=" + strconv.Itoa(port))
}
