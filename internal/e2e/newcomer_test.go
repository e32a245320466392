package e2e

import (
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	apiv2 "github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// TestNewcomerPath is the first thing a new user does (issue 12): a fresh
// home, `weir standalone --home H --dags D --port P` in one terminal, and in
// another plain `weir` commands, with no flag and no variable beyond the
// shell's, that list, trigger, test and clear the running deployment's DAGs.
// Every DAG is still active afterwards: `dags test` once loaded the empty
// default folder and deactivated them all. The standalone runs with the
// default [core] dags_are_paused_at_creation (true, as in Airflow): the
// examples start paused, `dags test` runs one anyway, a trigger of a paused
// DAG says its run waits and the run starts once the DAG is unpaused, and
// the README's steps (unpause hello, trigger it) run hello.
func TestNewcomerPath(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, env []string) {
		user := t.TempDir()
		home := filepath.Join(user, "weir") // the default home of this user
		shell := append([]string{"HOME=" + user, weirtest.Unset(weirtest.PausedAtCreation)}, env...)
		port := weirtest.FreePort(t)
		p := weirtest.StartProc(t, weirBin, "standalone", shell,
			"standalone", "--home", home, "--dags", examplesDir(), "--port", strconv.Itoa(port))
		base := p.WaitOutput(t, regexp.MustCompile(`API:\s+(http://\S+)/api/v2`))[1]
		if want := "http://127.0.0.1:" + strconv.Itoa(port); base != want {
			t.Fatalf("standalone serves at %s, want %s", base, want)
		}
		newClient(t, base, "").WaitHealthy()
		api := login(t, base, "admin", strings.TrimSpace(readFile(t, filepath.Join(home, "secrets", "admin_password"))))
		api.WaitDAG("watermark_load") // the last file: the first scan has recorded every DAG
		active := activeDags(t, api)

		toml := readFile(t, filepath.Join(home, "weir.toml"))
		for _, want := range []string{"dags_folder = " + strconv.Quote(examplesDir()), "port = " + strconv.Itoa(port)} {
			if !strings.Contains(toml, want) {
				t.Errorf("weir.toml does not say what standalone was started with (%s):\n%s", want, toml)
			}
		}

		weir := func(args ...string) result { return runWeir(t, shell, args...) }
		if r := weir("dags", "list"); r.Code != 0 || !regexp.MustCompile(`(?m)^hello\s+true\s`).MatchString(r.Stdout) {
			t.Errorf("dags list: want the deployment's DAGs, hello paused; %s", r)
		}
		if r := weir("dags", "test", "hello"); r.Code != 0 || !strings.Contains(r.Stdout, "of hello: success") {
			t.Errorf("dags test hello (paused): want a successful run; %s", r)
		}
		if after := activeDags(t, api); !equalSets(after, active) {
			t.Errorf("after dags test, the active DAGs are %v, want %v", after, active)
		}
		if d := api.WaitDAG("hello"); !d.IsPaused {
			t.Errorf("after dags test, hello is unpaused; want it still paused")
		}

		r := weir("dags", "trigger", "noop_chain", "--run-id", "newcomer")
		if r.Code != 0 || !strings.Contains(r.Stderr, "dag noop_chain is paused: the run stays queued until it is unpaused (weir dags unpause noop_chain)") {
			t.Errorf("dags trigger of a paused DAG: want the run created and a hint to unpause it; %s", r)
		}
		if run := api.Run("noop_chain", "newcomer"); run.State != core.RunQueued {
			t.Errorf("the run of paused noop_chain is %s, want queued", run.State)
		}
		if r := weir("dags", "unpause", "noop_chain"); r.Code != 0 {
			t.Errorf("dags unpause: %s", r)
		}
		api.WaitRunSuccess("noop_chain", "newcomer")

		// The README's steps.
		if r := weir("dags", "unpause", "hello"); r.Code != 0 {
			t.Errorf("dags unpause hello: %s", r)
		}
		if r := weir("dags", "trigger", "hello", "--conf", `{"name": "Weir"}`, "--run-id", "readme"); r.Code != 0 || r.Stderr != "" {
			t.Errorf("dags trigger hello once unpaused: want the run and nothing on stderr; %s", r)
		}
		api.WaitRunSuccess("hello", "readme")
		if log := api.Log("hello", "readme", "greet", 1); !strings.Contains(log, "Hello, Weir!") {
			t.Errorf("hello's greet log lacks the greeting:\n%s", log)
		}
		if r := weir("tasks", "clear", "noop_chain", "--run-id", "newcomer", "--yes"); r.Code != 0 || !strings.Contains(r.Stdout, "cleared") {
			t.Errorf("tasks clear: %s", r)
		}
		api.WaitRunSuccess("noop_chain", "newcomer")
		if after := activeDags(t, api); !equalSets(after, active) {
			t.Errorf("at the end, the active DAGs are %v, want %v", after, active)
		}
	})
}

// activeDags lists the ids of the active DAGs through the REST API.
func activeDags(t *testing.T, api *client) map[string]bool {
	t.Helper()
	var list apiv2.DAGCollection
	api.Call(http.MethodGet, "/api/v2/dags?only_active=false&limit=1000", nil, &list)
	out := map[string]bool{}
	for _, d := range list.Dags {
		if d.IsActive {
			out[d.DagID] = true
		}
	}
	if len(out) == 0 {
		t.Fatal("no active DAG")
	}
	return out
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
