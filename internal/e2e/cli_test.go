package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv2 "github.com/weirflow/weir/internal/api"
)

// TestCLIConfig checks `weir config` over weir.toml and the environment, and
// that a bad option stops every command with an error naming it.
func TestCLIConfig(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "weir.toml"), "[workers]\nconcurrency = 3\n")

	if got := strings.TrimSpace(mustWeir(t, nil, "config", "get-value", "workers", "concurrency", "--home", home)); got != "3" {
		t.Errorf("get-value workers concurrency = %q, want 3 (from weir.toml)", got)
	}
	// fastSettings sets WEIR__SCHEDULER__POLL_INTERVAL=200ms in the environment.
	if got := strings.TrimSpace(mustWeir(t, nil, "config", "get-value", "scheduler", "poll_interval", "--home", home)); got != "200ms" {
		t.Errorf("get-value scheduler poll_interval = %q, want 200ms (from the environment)", got)
	}
	list := mustWeir(t, nil, "config", "list", "--home", home)
	for _, re := range []string{`(?m)^workers\s+concurrency\s+3$`, `(?m)^scheduler\s+poll_interval\s+200ms$`, `(?m)^database\s+conn\s+sqlite:///`} {
		if !regexp.MustCompile(re).MatchString(list) {
			t.Errorf("weir config list does not match %s:\n%s", re, list)
		}
	}
	if r := runWeir(t, nil, "config", "get-value", "workers", "nope", "--home", home); r.Code == 0 || !strings.Contains(r.Stderr, `"nope"`) {
		t.Errorf("get-value of an unknown option: want a non-zero exit naming it; %s", r)
	}

	bad := []string{"WEIR__WORKERS__HEARTBEAT_INTERVAL=5"}
	for _, args := range [][]string{{"config", "list"}, {"standalone", "--port", "0"}, {"scheduler"}} {
		r := runWeir(t, bad, append(args, "--home", home)...)
		if r.Code == 0 || !strings.Contains(r.Stderr, "WEIR__WORKERS__HEARTBEAT_INTERVAL") || !strings.Contains(r.Stderr, "heartbeat_interval") {
			t.Errorf("weir %s with heartbeat_interval=5 (no unit): want a non-zero exit naming the option; %s", strings.Join(args, " "), r)
		}
	}
}

// TestCLIDatabaseAndDagsTest covers `weir db check|migrate` on a new database
// and the exit code of `weir dags test`.
func TestCLIDatabaseAndDagsTest(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	r := runWeir(t, nil, "db", "check", "--home", home)
	if r.Code == 0 || !strings.Contains(r.Stderr, "weir db migrate") {
		t.Errorf("db check of an unmigrated database: want a non-zero exit that says to run `weir db migrate`; %s", r)
	}
	mustWeir(t, nil, "db", "migrate", "--home", home)
	if out := mustWeir(t, nil, "db", "check", "--home", home); !strings.Contains(out, "up to date") {
		t.Errorf("db check after migrate: %s", out)
	}

	dags := t.TempDir()
	writeFile(t, filepath.Join(dags, "failing.yaml"),
		"dag_id: failing\nschedule: null\ntasks:\n  - task_id: bad\n    operator: bash\n    bash_command: echo nope; exit 3\n")
	r = runWeir(t, nil, "dags", "test", "failing", "--home", home, "--dags", dags)
	if r.Code != 1 || !regexp.MustCompile(`(?m)^bad\s+-1\s+failed\s+1\b`).MatchString(r.Stdout) {
		t.Errorf("dags test of a failing DAG: want exit 1 and task bad failed on try 1; %s", r)
	}
	if !strings.Contains(r.Stdout, "bad | nope\n") {
		t.Errorf("dags test of a failing DAG: want the task's log line prefixed by its id; %s", r)
	}
	r = runWeir(t, nil, "dags", "test", "hello", "--conf", `{"name": "cli"}`, "--home", home, "--dags", examplesDir())
	if r.Code != 0 || !strings.Contains(r.Stdout, "of hello: success") {
		t.Errorf("dags test hello: want exit 0 and a successful run; %s", r)
	}
}

// TestCLIAgainstStandalone drives a running standalone with the admin
// commands: dags, runs, users and tokens.
func TestCLIAgainstStandalone(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := startStandalone(t, home, examplesDir())
	api := s.api
	api.WaitDAG("noop_chain")
	weir := func(args ...string) result { return runWeir(t, nil, append(args, "--home", home)...) }
	must := func(args ...string) string { return mustWeir(t, nil, append(args, "--home", home)...) }

	list := must("dags", "list")
	for _, id := range []string{"hello", "mapping", "noop_chain", "retries", "trigger_rules"} {
		if !regexp.MustCompile(`(?m)^` + id + `\s`).MatchString(list) {
			t.Errorf("dags list lacks %s:\n%s", id, list)
		}
	}
	// Lists page in the database: --limit and --offset, and a hint on stderr
	// when more follow.
	if r := weir("dags", "list", "--limit", "2", "--offset", "1"); r.Code != 0 ||
		strings.Count(strings.TrimSpace(r.Stdout), "\n") != 2 || !strings.Contains(r.Stderr, "--offset 3 shows the next") {
		t.Errorf("dags list --limit 2 --offset 1: want a header, two DAGs and a hint for the next page; %s", r)
	}
	if r := weir("runs", "list", "--limit", "0"); r.Code == 0 || !strings.Contains(r.Stderr, "--limit 0") {
		t.Errorf("runs list --limit 0: want a non-zero exit naming --limit; %s", r)
	}
	show := must("dags", "show", "retries")
	if !regexp.MustCompile(`(?m)^after\s+bash\s+flaky\s`).MatchString(show) || !regexp.MustCompile(`(?m)^flaky\s+bash\s+-\s`).MatchString(show) {
		t.Errorf("dags show retries does not list flaky and after (upstream flaky):\n%s", show)
	}
	if r := weir("dags", "show", "nope"); r.Code == 0 || !strings.Contains(r.Stderr, `"nope"`) {
		t.Errorf("dags show of an unknown DAG: want a non-zero exit naming it; %s", r)
	}

	must("dags", "pause", "noop_chain")
	if d := api.WaitDAG("noop_chain"); !d.IsPaused {
		t.Errorf("after dags pause, the API shows noop_chain unpaused")
	}
	for _, conf := range []string{`{bad`, `[1, 2]`} {
		r := weir("dags", "trigger", "noop_chain", "--conf", conf, "--run-id", "bad-conf")
		if r.Code == 0 || !strings.Contains(r.Stderr, "--conf") {
			t.Errorf("dags trigger --conf %s: want a non-zero exit naming --conf; %s", conf, r)
		}
	}
	if status, body := api.Do(http.MethodGet, runPath("noop_chain", "bad-conf"), nil); status != http.StatusNotFound {
		t.Errorf("a trigger with bad --conf created run bad-conf: status %d %s", status, body)
	}
	if out := must("dags", "trigger", "noop_chain", "--conf", `{"who": "cli"}`, "--run-id", "cli-run"); !strings.Contains(out, "cli-run") {
		t.Errorf("dags trigger does not name the run it created: %s", out)
	}
	var conf map[string]any
	if err := json.Unmarshal(api.Run("noop_chain", "cli-run").Conf, &conf); err != nil || !cmp.Equal(conf, map[string]any{"who": "cli"}) {
		t.Errorf("conf of cli-run = %v (%v), want {who: cli}", conf, err)
	}
	must("dags", "unpause", "noop_chain")
	if d := api.WaitDAG("noop_chain"); d.IsPaused {
		t.Errorf("after dags unpause, the API shows noop_chain paused")
	}
	api.WaitRunSuccess("noop_chain", "cli-run")
	if runs := must("runs", "list", "--dag", "noop_chain"); !regexp.MustCompile(`(?m)^noop_chain\s+cli-run\s+manual\s+success\s`).MatchString(runs) {
		t.Errorf("runs list does not show cli-run as a successful manual run:\n%s", runs)
	}

	must("users", "create", "--username", "vera", "--role", "viewer", "--password", "vera-pass-123")
	vera := login(t, api.Base(), "vera", "vera-pass-123")
	vera.Get("/api/v2/dags/noop_chain", nil)
	if status, body := vera.Do(http.MethodPost, "/api/v2/dags/noop_chain/dagRuns", map[string]any{}); status != http.StatusForbidden {
		t.Errorf("a viewer triggered a run: status %d %s, want 403", status, body)
	}

	token := strings.TrimSpace(must("tokens", "create", "--user", "admin", "--name", "e2e"))
	var dags apiv2.DAGCollection
	newClient(t, api.Base(), token).Get("/api/v2/dags", &dags)
	var ids []string
	for _, d := range dags.Dags {
		ids = append(ids, d.DagID)
	}
	if !slices.Contains(ids, "hello") || !slices.Contains(ids, "noop_chain") {
		t.Errorf("GET /api/v2/dags with the new token lists %v, want the examples", ids)
	}
	forged := token[:len(token)-4] + "AAAA"
	if forged == token {
		forged = token[:len(token)-4] + "BBBB"
	}
	for name, tok := range map[string]string{"forged": forged, "made up": "weir_notarealtoken", "none": ""} {
		if status, body := newClient(t, api.Base(), tok).Do(http.MethodGet, "/api/v2/dags", nil); status != http.StatusUnauthorized {
			t.Errorf("GET /api/v2/dags with a %s token: status %d %s, want 401", name, status, body)
		}
	}
	if r := weir("tokens", "create", "--user", "nobody"); r.Code == 0 || !strings.Contains(r.Stderr, `"nobody"`) {
		t.Errorf("tokens create for an unknown user: want a non-zero exit naming it; %s", r)
	}

	// The audit log, as GET /api/v2/eventLogs serves it.
	api.Call(http.MethodPatch, "/api/v2/dags/hello", map[string]any{"is_paused": true}, nil)
	var logs []struct {
		Event, Owner, Target string
	}
	if err := json.Unmarshal([]byte(must("audit", "list", "--event", "dag.pause", "--limit", "1", "--json")), &logs); err != nil ||
		len(logs) != 1 || logs[0].Owner != "admin" || logs[0].Target != "hello" {
		t.Errorf("audit list --event dag.pause = %+v (%v), want admin's pause of hello", logs, err)
	}
}
