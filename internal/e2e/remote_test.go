package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
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

// backfillDAG is a daily DAG whose one task takes a second, so that runs
// overlap when more than one may run.
const backfillDAG = `dag_id: %s
schedule: "@daily"
start_date: 2026-01-01
catchup: false
tasks:
  work:
    operator: bash
    bash_command: sleep %d
`

// TestRemoteBackfill is issue 12's backfill done-when through the built
// binary and the remote CLI, on both engines: `weir dags backfill` over 30
// days with --max-active-runs 3 runs 30 runs, never more than 3 at once
// (by the runs' own start and end times), with workers that could run
// more; a second backfill, cancelled midway with `weir backfills cancel`,
// starts nothing more: its runs not started are failed, and it completes.
func TestRemoteBackfill(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, env []string) {
		server := t.TempDir()
		home, dags := filepath.Join(server, "weir"), filepath.Join(server, "dags")
		if err := os.MkdirAll(dags, 0o700); err != nil {
			t.Fatal(err)
		}
		for name, secs := range map[string]int{"bf": 1, "bf_slow": 3} {
			if err := os.WriteFile(filepath.Join(dags, name+".yaml"), fmt.Appendf(nil, backfillDAG, name, secs), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		port := weirtest.FreePort(t)
		p := weirtest.StartProc(t, weirBin, "standalone", append([]string{"HOME=" + server, "WEIR__WORKERS__CONCURRENCY=8"}, env...),
			"standalone", "--home", home, "--dags", dags, "--port", strconv.Itoa(port))
		base := p.WaitOutput(t, regexp.MustCompile(`API:\s+(http://\S+)/api/v2`))[1]
		newClient(t, base, "").WaitHealthy()
		password := strings.TrimSpace(readFile(t, filepath.Join(home, "secrets", "admin_password")))
		api := login(t, base, "admin", password)
		api.WaitDAG("bf")
		api.WaitDAG("bf_slow")

		laptop := t.TempDir()
		shell := []string{"HOME=" + laptop, "XDG_CONFIG_HOME=" + filepath.Join(laptop, ".config"), "WEIR_HOME=" + filepath.Join(laptop, "weir")}
		weir := func(args ...string) result {
			t.Helper()
			r := runWeir(t, shell, args...)
			if r.Code != 0 {
				t.Fatalf("weir %s: %s", strings.Join(args, " "), r)
			}
			return r
		}
		weir("login", "--api-url", base, "--username", "admin", "--password", password)
		weir("dags", "unpause", "bf")
		weir("dags", "unpause", "bf_slow")

		r := weir("dags", "backfill", "bf", "--from-date", "2026-01-01", "--to-date", "2026-01-30", "--max-active-runs", "3")
		if !strings.Contains(r.Stdout, "created backfill 1 of bf: 30 runs to run, at most 3 at once") {
			t.Fatalf("dags backfill: %s", r)
		}
		waitBackfillDone(t, api, 1)
		runs := backfillRuns(t, api, "bf", 1)
		if len(runs) != 30 {
			t.Fatalf("backfill 1 has %d runs, want 30", len(runs))
		}
		for _, run := range runs {
			if run.State != core.RunSuccess || run.StartDate == nil || run.EndDate == nil {
				t.Fatalf("run %s: %s, want success with start and end", run.RunID, run.State)
			}
		}
		most := weirtest.MostAtOnce(runs)
		if most > 3 || most < 1 {
			t.Errorf("at most %d of backfill 1's runs ran at once, want at most 3", most)
		}
		t.Logf("backfill 1: 30 runs, at most %d at once", most)
		if r := weir("backfills", "get", "1"); !strings.Contains(r.Stdout, "completed") || !strings.Contains(r.Stdout, "runs: queued 0 running 0 success 30 failed 0") {
			t.Errorf("backfills get 1: %s", r)
		}

		// Cancelled midway: once one of its runs succeeded.
		weir("dags", "backfill", "bf_slow", "--from-date", "2026-01-01", "--to-date", "2026-01-30", "--max-active-runs", "2")
		weirtest.WaitFor(t, "a run of backfill 2 to succeed", func() (bool, string) {
			n := 0
			for _, run := range backfillRuns(t, api, "bf_slow", 2) {
				if run.State == core.RunSuccess {
					n++
				}
			}
			return n > 0, fmt.Sprintf("%d succeeded", n)
		})
		if r := weir("backfills", "cancel", "2"); r.Stdout != "backfill 2 of bf_slow: completed\n" {
			t.Errorf("backfills cancel 2: %s", r)
		}
		weirtest.WaitFor(t, "backfill 2's running runs to finish", func() (bool, string) {
			states := map[core.DagRunState]int{}
			for _, run := range backfillRuns(t, api, "bf_slow", 2) {
				states[run.State]++
			}
			return states[core.RunQueued] == 0 && states[core.RunRunning] == 0, fmt.Sprint(states)
		})
		after := backfillRuns(t, api, "bf_slow", 2)
		started, failed := 0, 0
		for _, run := range after {
			if run.StartDate != nil {
				started++
			}
			if run.State == core.RunFailed && run.StartDate == nil {
				failed++
			}
		}
		if started >= 30 || failed == 0 || started+failed != 30 || weirtest.MostAtOnce(after) > 2 {
			t.Errorf("after the cancel: %d runs started, %d failed without starting, at most %d at once; want fewer than 30 started, the rest failed, at most 2 at once",
				started, failed, weirtest.MostAtOnce(after))
		}
		var b core.Backfill
		api.Get("/api/v2/backfills/2", &b)
		if b.CompletedAt == nil {
			t.Errorf("backfill 2 after the cancel: %+v, want completed", b)
		}
	})
}

// waitBackfillDone waits until the backfill is completed.
func waitBackfillDone(t *testing.T, api *client, id int64) {
	t.Helper()
	weirtest.WaitWithin(t, 3*time.Minute, fmt.Sprintf("backfill %d to complete", id), func() (bool, string) {
		var b core.Backfill
		api.Get("/api/v2/backfills/"+strconv.FormatInt(id, 10), &b)
		return b.CompletedAt != nil, fmt.Sprintf("%+v", b)
	})
}

// backfillRuns lists a backfill's runs.
func backfillRuns(t *testing.T, api *client, dagID string, id int64) []core.DagRun {
	t.Helper()
	var out struct {
		DagRuns []core.DagRun `json:"dag_runs"`
	}
	api.Get(fmt.Sprintf("/api/v2/dags/%s/dagRuns?backfill_id=%d&limit=100", dagID, id), &out)
	return out.DagRuns
}
