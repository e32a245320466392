package cli_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// TestBackfillCLI: `weir dags backfill` (dry run, then real) makes a
// backfill and its queued backfill runs; `weir backfills` lists, shows,
// pauses and cancels it; bad flags name the problem and change nothing.
func TestBackfillCLI(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s *surfaces) {
		ctx := t.Context()
		daily := core.DAG{DagID: "daily", Schedule: "@daily", Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}}
		if _, _, err := s.st.DagSync(ctx, &store.DagSyncParams{Spec: daily, Hash: "d", Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		fail := func(want string, args ...string) {
			t.Helper()
			var out, errOut bytes.Buffer
			code := cli.Run(ctx, args, cli.Options{Stdout: &out, Stderr: &errOut, Environ: s.env})
			if code == 0 || !strings.Contains(errOut.String(), want) {
				t.Errorf("weir %s: exit %d, stderr %q; want a failure naming %q", strings.Join(args, " "), code, errOut.String(), want)
			}
		}
		fail("--from-date is required", "dags", "backfill", "daily", "--to-date", "2026-01-05")
		fail(`reprocess_behavior "all"`, "dags", "backfill", "daily", "--from-date", "2026-01-01", "--to-date", "2026-01-05", "--reprocess-behavior", "all")
		fail("has no schedule", "dags", "backfill", "etl", "--from-date", "2026-01-01", "--to-date", "2026-01-05")
		fail("backfill id \"x\"", "backfills", "cancel", "x")
		fail("is one to run: the range is before its start_date", "dags", "backfill", "daily", "--from-date", "2030-01-01", "--to-date", "2030-01-05")
		fail("--max-active-runs must be at least 1, got 0", "dags", "backfill", "daily", "--from-date", "2026-01-01", "--to-date", "2026-01-05", "--max-active-runs", "0")

		got := s.run("dags", "backfill", "daily", "--from-date", "2026-01-01", "--to-date", "2026-01-05", "--dry-run", "--run-backwards")
		if !strings.Contains(got, "would run 5 of 5 logical dates") || strings.Index(got, "2026-01-05") > strings.Index(got, "2026-01-01") {
			t.Errorf("dry run printed %q, want 5 dates newest first", got)
		}
		if n, _ := s.st.DagRunCount(ctx, &store.DagRunListParams{}); n != 0 {
			t.Fatalf("the dry run and bad commands made %d runs", n)
		}

		got = s.run("dags", "backfill", "daily", "-s", "2026-01-01", "-e", "2026-01-05", "--max-active-runs", "2", "-c", `{"k":1}`)
		if !strings.Contains(got, "created backfill 1 of daily: 5 runs to run, at most 2 at once") {
			t.Errorf("backfill printed %q", got)
		}
		if a := s.lastAudit(); a.Action != "backfill.create" || a.Target != "daily/1" || a.User != "cli:tester" {
			t.Errorf("audit = %+v", a)
		}
		got = s.run("runs", "list", "--dag-id", "daily")
		if strings.Count(got, "backfill__2026-01-0") != 5 || strings.Count(got, "queued") != 5 {
			t.Errorf("runs list = %q, want 5 queued backfill runs", got)
		}
		var listed []core.Backfill
		if err := json.Unmarshal([]byte(s.run("backfills", "list", "-o", "json")), &listed); err != nil || len(listed) != 1 ||
			listed[0].MaxActiveRuns != 2 || strings.Join(strings.Fields(string(listed[0].DagRunConf)), "") != `{"k":1}` {
			t.Errorf("backfills list -o json = %+v (%v)", listed, err)
		}
		if got := s.run("backfills", "pause", "1"); got != "backfill 1 of daily: paused\n" {
			t.Errorf("pause printed %q", got)
		}
		if got := s.run("backfills", "get", "1"); !strings.Contains(got, "paused") || !strings.Contains(got, "runs: queued 5 running 0 success 0 failed 0") {
			t.Errorf("get printed %q", got)
		}
		if got := s.run("backfills", "cancel", "1"); got != "backfill 1 of daily: completed\n" {
			t.Errorf("cancel printed %q", got)
		}
		if got := s.run("backfills", "get", "1"); !strings.Contains(got, "runs: queued 0 running 0 success 0 failed 5") {
			t.Errorf("after cancel, get printed %q", got)
		}
		fail("already completed", "backfills", "cancel", "1")
		fail("backfill 7", "backfills", "get", "7")
	})
}
