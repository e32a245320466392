package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for the deployment's sessions

	"github.com/weirflow/weir/internal/testutil/lbtest"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// guideBlock finds the blocks of docs/deployment.md that TestDeploymentGuide
// runs: a `<!-- e2e: NAME -->` line, then a fenced block.
var guideBlock = regexp.MustCompile("(?s)<!-- e2e: ([^>]+?) -->\n```[a-z]*\n(.*?)```")

// readGuide returns docs/deployment.md's e2e blocks by name.
func readGuide(t *testing.T) map[string]string {
	t.Helper()
	blocks := map[string]string{}
	for _, m := range guideBlock.FindAllStringSubmatch(readFile(t, filepath.Join(repoRoot, "docs", "deployment.md")), -1) {
		blocks[m[1]] = m[2]
	}
	return blocks
}

// fleet is a deployment built by following docs/deployment.md on this
// machine: each process a "machine" with a home of its own, the guide's
// /etc/weir one folder they share (the copies the guide asks for), and
// the api-servers behind a round-robin load balancer.
type fleet struct {
	t      *testing.T
	guide  map[string]string
	etc    string // the guide's /etc/weir
	dags   string // the guide's /srv/weir/dags
	path   string // PATH with the built weir first
	homes  string // a home per machine under it
	lb     *lbtest.LB
	tls    *http.Transport // trusts the test's CA, which signed the api-servers' certificate
	api    map[string]int  // api-server name → its port
	procs  map[string]*proc
	admin  string // the admin machine's home
	passwd string // the first admin's password
	dsn    string // the deployment's database (writeEnv)
}

// newFleet prepares the guide's folders and a load balancer over two
// api-server ports; nothing runs yet.
func newFleet(t *testing.T) *fleet {
	t.Helper()
	bin := t.TempDir()
	if err := os.Symlink(weirBin, filepath.Join(bin, "weir")); err != nil {
		t.Fatal(err)
	}
	f := &fleet{t: t, guide: readGuide(t), etc: t.TempDir(), dags: t.TempDir(), homes: t.TempDir(), path: bin + ":" + os.Getenv("PATH"),
		api: map[string]int{"api-a": weirtest.FreePort(t), "api-b": weirtest.FreePort(t)}, procs: map[string]*proc{},
		admin: t.TempDir(), passwd: "guide-admin-secret"}
	f.lb = lbtest.Start(t, f.apiURL("api-a"), f.apiURL("api-b"))
	ca, cert, key := testCertificates(t) // for 127.0.0.1, the load balancer's and the api-servers' address
	if err := os.Mkdir(filepath.Join(f.etc, "tls"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"ca.pem": ca, "server.pem": cert, "server.key": key} {
		weirtest.WriteFile(t, filepath.Join(f.etc, "tls", name), string(b))
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	f.tls = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	return f
}

// apiURL is an api-server's own address, bypassing the load balancer.
func (f *fleet) apiURL(name string) string { return "https://127.0.0.1:" + strconv.Itoa(f.api[name]) }

// lbURL is the load balancer's address, where the guide's base_url points.
func (f *fleet) lbURL() string { return strings.Replace(f.lb.URL(), "http://", "https://", 1) }

// client returns a client of base (https) sending token, trusting the CA.
func (f *fleet) client(base, token string) *client {
	return &client{weirtest.NewClient(f.t, base, token).WithTransport(f.tls)}
}

// login returns a client of base holding the first admin's session.
func (f *fleet) login(base string) *client {
	f.t.Helper()
	c := f.client(base, "")
	if status, body := c.Do(http.MethodPost, "/api/v2/auth/login", map[string]string{"username": "admin", "password": f.passwd}); status != http.StatusOK {
		f.t.Fatalf("login on %s: %d %s", base, status, body)
	}
	return c
}

// block returns a guide block with the guide's paths mapped to the test's.
func (f *fleet) block(name string) string {
	f.t.Helper()
	b, ok := f.guide[name]
	if !ok {
		f.t.Fatalf("docs/deployment.md has no block marked <!-- e2e: %s -->", name)
	}
	return strings.NewReplacer("/etc/weir", f.etc, "/srv/weir/dags", f.dags, "/usr/local/bin/weir", weirBin).Replace(b)
}

// writeEnv writes the guide's weir.env with this test's database, load
// balancer and api-server port; every other line as the guide has it. A
// setting the test replaces must be in the guide's block.
func (f *fleet) writeEnv(dsn string) {
	f.t.Helper()
	f.dsn = dsn
	replace := map[string]string{"WEIR__DATABASE__CONN": dsn, "WEIR__API__BASE_URL": f.lbURL()}
	var out []string
	for _, line := range strings.Split(f.block("weir.env"), "\n") {
		if k, _, ok := strings.Cut(line, "="); ok && replace[k] != "" {
			line = k + "=" + replace[k]
			delete(replace, k)
		}
		out = append(out, line)
	}
	if len(replace) > 0 {
		f.t.Fatalf("the guide's weir.env lacks %v", replace)
	}
	weirtest.WriteFile(f.t, filepath.Join(f.etc, "weir.env"), strings.Join(out, "\n"))
}

// sh runs a guide block in bash on the admin machine, with the guide's
// weir.env loaded first when loadEnv (the guide's "with weir.env loaded"),
// after replacing each old with new in it; it returns the output.
func (f *fleet) sh(name string, loadEnv bool, oldNew ...string) string {
	f.t.Helper()
	script := strings.NewReplacer(oldNew...).Replace(f.block(name))
	if loadEnv {
		script = "set -a; . " + filepath.Join(f.etc, "weir.env") + "; set +a\n" + script
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Env = weirtest.Env([]string{"PATH=" + f.path, "WEIR_HOME=" + f.admin, "ADMIN_PASSWORD=" + f.passwd})
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("guide block %q: %v\n%s\n--- script ---\n%s", name, err, out, script)
	}
	return string(out)
}

// health returns what `weir health` lists from the database (every
// process's last heartbeat, for a failure's message), or why it could not.
func (f *fleet) health() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, weirBin, "health")
	cmd.Env = weirtest.Env(append([]string{"WEIR_HOME=" + f.admin}, f.env(filepath.Join(f.etc, "weir.env"))...))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%s(weir health: %v)", out, err)
	}
	return string(out)
}

// sessions returns what the deployment's database sessions are doing
// (those in a transaction or a query, longest first: a lock held by a
// transaction that never ends stops every scheduler's pass), for a
// failure's message, or why it could not.
func (f *fleet) sessions() string {
	db, err := sql.Open("pgx", f.dsn)
	if err != nil {
		return err.Error()
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, `SELECT pid, application_name, state, coalesce(wait_event_type || ':' || wait_event, ''),
		coalesce(extract(epoch FROM now() - xact_start)::text, ''), left(regexp_replace(query, '\s+', ' ', 'g'), 160)
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'
		ORDER BY xact_start NULLS LAST`)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var pid int
		var app, state, wait, age, query string
		if err := rows.Scan(&pid, &app, &state, &wait, &age, &query); err != nil {
			return err.Error()
		}
		fmt.Fprintf(&b, "pid %d %s %s wait %q xact %ss: %s\n", pid, app, state, wait, age, query)
	}
	if err := rows.Err(); err != nil {
		return err.Error()
	}
	if b.Len() == 0 {
		return "(every session idle)\n"
	}
	return b.String()
}

// env reads a guide environment file (KEY=VALUE lines, # comments).
func (f *fleet) env(path string) []string {
	f.t.Helper()
	var env []string
	for _, line := range strings.Split(readFile(f.t, path), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			env = append(env, line)
		}
	}
	return env
}

// start starts a process as the guide's systemd unit does (its
// Environment=, EnvironmentFile= and ExecStart= lines, %i = instance), on
// a machine of its own named name; extra settings come last.
func (f *fleet) start(unit, instance, name string, extra ...string) *proc {
	f.t.Helper()
	home := filepath.Join(f.homes, name)
	if err := os.MkdirAll(home, 0o700); err != nil {
		f.t.Fatal(err)
	}
	var env, args []string
	for _, line := range strings.Split(strings.ReplaceAll(f.block("unit "+unit), "%i", instance), "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "Environment":
			env = append(env, strings.Replace(v, "/var/lib/weir", home, 1))
		case "EnvironmentFile":
			env = append(env, f.env(v)...)
		case "ExecStart":
			args = strings.Fields(v)
		}
	}
	if len(args) == 0 || args[0] != weirBin {
		f.t.Fatalf("unit %s: ExecStart runs %q, want /usr/local/bin/weir", unit, args)
	}
	p := startProc(f.t, name, append(env, extra...), args[1:]...)
	f.procs[name] = p
	return p
}

// startAPI starts an api-server (api-a or api-b) on its port and waits
// until it answers.
func (f *fleet) startAPI(name string) {
	f.t.Helper()
	f.start("weir-api-server.service", "", name, "WEIR__API__PORT="+strconv.Itoa(f.api[name]))
	f.client(f.apiURL(name), "").WaitHealthy()
}

// restartAPIs stops (SIGTERM) and starts each api-server in turn, as the
// guide's rolling restart does.
func (f *fleet) restartAPIs() {
	f.t.Helper()
	for _, name := range []string{"api-a", "api-b"} {
		f.stop(name)
		f.startAPI(name)
	}
}

// stop sends a process SIGTERM and waits for it to exit, which a
// graceful shutdown does with status 0 (systemd would otherwise mark the
// unit failed), its workers' long-poll claims answered at once.
func (f *fleet) stop(name string) {
	f.t.Helper()
	p := f.procs[name]
	p.Signal(f.t, syscall.SIGTERM)
	if code := p.WaitExit(f.t); code != 0 {
		f.t.Errorf("%s exited %d on SIGTERM, want 0:\n%s", name, code, p.Output())
	}
}
