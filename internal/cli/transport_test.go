package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// weirIn runs the CLI with env and stdin and returns what it printed and
// its exit code.
func weirIn(t *testing.T, env []string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli.Run(t.Context(), args, cli.Options{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut, Environ: env})
	return out.String(), errOut.String(), code
}

// remoteEnv is the surfaces' environment with the REST API configured
// (WEIR_API_URL and WEIR_API_TOKEN, as otto): the admin commands go
// through the API server instead of the database.
func (s *surfaces) remoteEnv() []string {
	return append(slices.Clone(s.env), "WEIR_API_URL="+s.srv.URL, "WEIR_API_TOKEN="+s.token)
}

// Every command with a remote transport prints the same in both: the same
// command line against the database and against a real api-server on
// loopback over that database, on SQLite and PostgreSQL. Changes run once
// in each transport on their own names (%s is "l" locally, "r" remotely)
// and must print the same with the name swapped; errors must name the
// problem in the same words.
func TestTransportsPrintTheSame(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s *surfaces) {
		s.run("dags", "trigger", "etl", "--run-id", "seed1", "--conf", `{"n": 1}`)
		s.run("dags", "trigger", "etl", "--run-id", "seed2", "--partition-key", "2026-01")
		s.run("pools", "set", "warehouse", "4", "connections the warehouse allows")
		s.run("variables", "set", "region", "eu-west-1", "--description", "where we run")
		s.run("variables", "set", "thresholds", `{"rows": 1000}`, "--json")
		s.run("connections", "add", "dw", "postgres://etl:secret@db:5432/dw?sslmode=require&password=x")
		orders := seedState(t, s.st)                // run r1 of etl (task load), asset orders
		seedBackfills(t, s)                         // DAGs daily (paused) and hourly, a backfill of daily
		cb := strconv.FormatInt(seedLogs(t, s), 10) // logs of etl/r1/load and of a callback of r1
		ti := "/api/v2/dags/etl/dagRuns/r1/taskInstances/load/state-store/"
		for _, k := range []string{"k", "kl", "kr"} {
			s.rest("PUT", ti+k, map[string]any{"value": map[string]int{"n": 1}, "retention": "never"})
		}
		s.rest("PUT", fmt.Sprintf("/api/v2/assets/%d/state-store/w", orders), map[string]any{"value": "2026-01-01"})
		for _, k := range []string{"2026-01", "2026-02"} {
			s.rest("POST", "/api/v2/assets/events", map[string]any{"asset_id": orders, "partition_key": k, "extra": map[string]int{"rows": 3}})
		}
		load := []string{"--dag", "etl", "--run", "r1", "--task", "load"}

		cases := [][]string{
			{"dags", "list"}, {"dags", "list", "-o", "json"}, {"dags", "list", "-o", "yaml"}, {"dags", "list", "-o", "plain"},
			{"dags", "list-import-errors"}, {"dags", "list-import-errors", "-o", "json"},
			{"dags", "list-warnings"}, {"dags", "list-warnings", "--dag-id", "etl", "-o", "json"},
			{"tasks", "list", "etl"}, {"tasks", "list", "etl", "-o", "json"},
			{"runs", "list"}, {"runs", "list", "--dag-id", "etl", "-o", "json"}, {"runs", "list", "--state", "queued", "--limit", "1"},
			{"runs", "list", "--offset", "1", "-o", "yaml"},
			{"dags", "state", "etl", "seed1"}, {"dags", "state", "etl", "2020-01-02"}, {"dags", "state", "etl", "nope"},
			{"tasks", "states-for-dag-run", "etl", "seed1"}, {"tasks", "states-for-dag-run", "etl", "seed2", "-o", "json"},
			{"tasks", "states-for-dag-run", "etl", "nope"},
			{"tasks", "clear", "etl", "--run-id", "seed1", "--dry-run"}, {"tasks", "clear", "etl", "-t", "nope", "--dry-run"},
			{"tasks", "clear", "etl", "--run-id", "seed1"}, // asks; no answer clears nothing
			{"assets", "list"}, {"assets", "list", "--all", "-o", "json"},
			append([]string{"state-store", "list"}, load...), append([]string{"state-store", "list", "-o", "json", "--limit", "1"}, load...),
			{"state-store", "list", "--asset", "orders"}, {"state-store", "get", "w", "--asset", "orders"},
			append([]string{"state-store", "get", "k"}, load...), append([]string{"state-store", "get", "nope"}, load...),
			{"pools", "list"}, {"pools", "list", "-o", "json"}, {"pools", "list", "--limit", "1"},
			{"connections", "list"}, {"connections", "list", "-o", "json"},
			{"variables", "list"}, {"variables", "get", "region"}, {"variables", "get", "thresholds", "--json"},
			{"variables", "get", "missing", "--default", "none"}, {"variables", "export", "-"},
			{"variables", "import", "/nonexistent/vars.json"},
			// errors
			{"dags", "trigger", "nope"}, {"dags", "pause", "nope"}, {"tasks", "list", "nope"}, {"pools", "delete", "nope"},
			{"variables", "get", "missing"}, {"variables", "delete", "missing"}, {"connections", "delete", "missing"},
			{"dags", "trigger", "etl", "--run-id", "seed1"}, {"pools", "set", "bad name!", "1"},
			{"runs", "list", "--dag-id", "nope"},
			{"users", "create", "--username", "x", "--password", "p", "--role", "boss"},
			{"dags", "show", "etl"}, {"dags", "show", "etl", "--json"}, {"dags", "show", "nope"},
			{"dags", "next-execution", "daily"}, {"dags", "next-execution", "hourly", "-n", "3"}, {"dags", "next-execution", "etl"},
			{"dags", "next-execution", "nope"}, {"dags", "next-execution", "daily", "-n", "0"},
			{"dags", "delete", "etl"}, {"dags", "delete", "nope", "--yes"}, // asks; no answer deletes nothing
			{"assets", "show", "orders"}, {"assets", "show", "orders", "--json"}, {"assets", "show", "nope"}, {"assets", "materialize", "nope"},
			{"assets", "events"}, {"assets", "events", "--asset", "orders", "-o", "json"}, {"assets", "events", "--partition", "2026-02"},
			{"assets", "events", "--limit", "1"}, {"assets", "events", "--asset", "nope"},
			{"assets", "aliases"}, {"assets", "aliases", "-o", "json"}, {"assets", "aliases", "nope"},
			{"assets", "events", "create", "--name", "nope"}, {"assets", "events", "create"},
			{"assets", "events", "create", "--name", "orders", "--extra", "[1]"},
			{"runs", "callbacks", "etl", "seed1"}, {"runs", "callbacks", "etl", "seed1", "-o", "json", "--task", "load"},
			{"runs", "callbacks", "etl", "nope"},
			{"users", "list"}, {"users", "list", "-o", "json"}, {"users", "get", "otto"}, {"users", "get", "otto", "-o", "yaml"},
			{"users", "get", "nope"}, {"users", "update", "-u", "nope", "--role", "op"}, {"users", "update", "-u", "otto"},
			{"users", "update", "-u", "otto", "--role", "boss"}, {"users", "update", "-u", "otto", "--password", ""},
			{"users", "delete", "-u", "nope", "--yes"}, {"users", "delete", "-u", "otto"}, // asks; no answer deletes nothing
			{"assets", "watchers", "feed"}, {"assets", "watchers", "feed", "-o", "json"}, {"assets", "watchers", "nope"},
			{"assets", "watchers", "set-cursor", "feed", "poll", "{bad"}, {"assets", "watchers", "set-cursor", "feed", "nope", "1"},
			{"assets", "watchers", "reset-cursor", "nope", "poll"},
			// backfills
			{"dags", "backfill", "daily", "-s", "2026-01-01", "-e", "2026-01-05", "--dry-run"},
			{"dags", "backfill", "daily", "-s", "2026-01-01", "-e", "2026-01-05", "--reprocess-behavior", "completed", "--dry-run"},
			{"dags", "backfill", "daily", "-s", "2026-01-05", "-e", "2026-01-01"}, {"dags", "backfill", "etl", "-s", "2026-01-01", "-e", "2026-01-02"},
			{"dags", "backfill", "daily", "-s", "2026-01-01", "-e", "2026-01-03"}, // 409: daily has one not completed
			{"backfills", "list"}, {"backfills", "list", "-o", "json"}, {"backfills", "list", "--dag-id", "nope"},
			{"backfills", "get", "1"}, {"backfills", "get", "1", "-o", "yaml"}, {"backfills", "get", "99"}, {"backfills", "cancel", "99"},
			// logs
			{"tasks", "logs", "etl", "r1", "load"}, {"tasks", "logs", "etl", "r1", "load", "--follow"},
			{"tasks", "logs", "etl", "seed1", "extract"}, // nothing written yet
			{"tasks", "logs", "etl", "r1", "load", "--try", "9"}, {"tasks", "logs", "etl", "r1", "nope"},
			{"tasks", "logs", "etl", "r1", "load", "--map-index", "3"}, {"tasks", "logs", "etl", "r1", "load", "--try", "-1"},
			{"runs", "callback-logs", cb}, {"runs", "callback-logs", cb, "--attempt", "1"}, {"runs", "callback-logs", cb, "--attempt", "2"},
			{"runs", "callback-logs", "999"}, {"runs", "callback-logs", "x"},
		}
		for _, args := range cases {
			lo, le, lc := weirIn(t, s.env, "", args...)
			ro, re, rc := weirIn(t, s.remoteEnv(), "", args...)
			if lo != ro || le != re || lc != rc {
				t.Errorf("weir %s differs:\nlocal  (exit %d): %q %q\nremote (exit %d): %q %q",
					strings.Join(args, " "), lc, lo, le, rc, ro, re)
			}
		}

		// The logs read are the ones written, in both transports (the
		// comparison above holds for errors too).
		for _, env := range [][]string{s.env, s.remoteEnv()} {
			for args, want := range map[string]string{"tasks logs etl r1 load": "loading 3 rows\nloaded\n", "runs callback-logs " + cb: "paged the on-call\n"} {
				if out, errOut, code := weirIn(t, env, "", strings.Fields(args)...); code != 0 || out != want {
					t.Errorf("weir %s: exit %d, %q %q; want %q", args, code, out, errOut, want)
				}
			}
		}

		// A duplicate run id is named in the user's terms, never as the
		// database's constraint (UNIQUE constraint failed ... (2067), SQLSTATE 23505).
		for _, env := range [][]string{s.env, s.remoteEnv()} {
			_, errOut, _ := weirIn(t, env, "", "dags", "trigger", "etl", "--run-id", "seed1")
			if !strings.Contains(errOut, `run_id "seed1" already exists; choose another`) ||
				strings.Contains(errOut, "UNIQUE") || strings.Contains(errOut, "duplicate key") || strings.Contains(errOut, "SQLSTATE") {
				t.Errorf("duplicate run id: %q", errOut)
			}
		}

		imports := t.TempDir()
		for _, side := range []string{"l", "r"} {
			body := fmt.Sprintf(`{"i%[1]s": "x", "j%[1]s": {"a": [1, 2]}}`, side)
			if err := os.WriteFile(filepath.Join(imports, side+".json"), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		changes := [][]string{
			{"variables", "import", filepath.Join(imports, "%s.json")},
			{"dags", "trigger", "etl", "--run-id", "r%s", "--conf", `{"n": 2}`},
			{"tasks", "clear", "etl", "--run-id", "r%s", "-t", "extract", "-d", "--yes"},
			{"dags", "pause", "etl"}, {"dags", "unpause", "etl"},
			{"pools", "set", "p%s", "3", "a pool"}, {"pools", "set", "p%s", "5"}, {"pools", "delete", "p%s"},
			{"variables", "set", "v%s", "1", "--description", "d"}, {"variables", "set", "v%s", "2"}, {"variables", "get", "v%s"},
			{"variables", "delete", "v%s"},
			{"connections", "add", "c%s", "https://u:pw@api.example.com"}, {"connections", "delete", "c%s"},
			append([]string{"state-store", "delete", "k%s"}, load...),
			{"users", "create", "--username", "u%s", "--password", "pw", "--role", "op"},
			{"users", "update", "-u", "u%s", "--role", "viewer", "--password", "pw2"},
			{"users", "delete", "-u", "u%s", "--yes"},
			{"backfills", "pause", "1"}, {"backfills", "unpause", "1"}, {"dags", "delete", "d%s", "--yes"},
			{"assets", "watchers", "set-cursor", "feed", "poll", `{"offset": 10}`}, {"assets", "watchers", "reset-cursor", "feed", "poll"},
			{"state-store", "clear", "--asset", "orders"},
		}
		for _, tmpl := range changes {
			local, remote := fill(tmpl, "l"), fill(tmpl, "r")
			lo, le, lc := weirIn(t, s.env, "", local...)
			ro, re, rc := weirIn(t, s.remoteEnv(), "", remote...)
			if lc != 0 || rc != 0 || swap(lo) != ro || swap(le) != re {
				t.Errorf("weir %s differs:\nlocal  (exit %d): %q %q\nremote (exit %d): %q %q",
					strings.Join(tmpl, " "), lc, lo, le, rc, ro, re)
			}
		}
		// The remote changes went through the API, as otto.
		if e := s.lastAudit(); e.User != "otto" || e.Action != "asset_state.clear" {
			t.Errorf("last audit entry %+v, want otto's asset_state.clear", e)
		}
		// A remote export leaves out the secrets the API masks, saying so,
		// rather than writing *** into the file.
		s.run("variables", "set", "db_password", "hunter2")
		lo, _, _ := weirIn(t, s.env, "", "variables", "export", "-")
		ro, re, rc := weirIn(t, s.remoteEnv(), "", "variables", "export", "-")
		if !strings.Contains(lo, `"db_password": "hunter2"`) || strings.Contains(ro, "db_password") || rc != 0 ||
			!strings.Contains(re, "1 secret variables left out") || !strings.Contains(ro, `"jr": {`) {
			t.Errorf("export with a secret:\nlocal  %q\nremote (exit %d) %q %q", lo, rc, ro, re)
		}
		// An asset event created remotely is the logged-in user's; a repeat
		// of its idempotency key creates nothing, as locally.
		for _, c := range []struct {
			env  []string
			user string
		}{{s.env, "cli:tester"}, {s.remoteEnv(), "otto"}} {
			for i, wantDup := range []bool{false, true} {
				out, errOut, code := weirIn(t, c.env, "", "assets", "events", "create", "--name", "orders", "--partition-key", "p",
					"--idempotency-key", "key-"+c.user)
				var got struct {
					Event     core.AssetEvent `json:"event"`
					Duplicate bool            `json:"duplicate"`
				}
				if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 || got.Duplicate != wantDup ||
					got.Event.SourceUser != c.user || got.Event.Name != "orders" || *got.Event.PartitionKey != "p" {
					t.Errorf("assets events create as %s (%d): exit %d %q %q", c.user, i, code, out, errOut)
				}
			}
		}
		// A backfill created and cancelled remotely prints what a local one does.
		bl, be, bc := weirIn(t, s.env, "", "dags", "backfill", "hourly", "-s", "2026-01-01", "-e", "2026-01-01T02:00:00Z", "--max-active-runs", "2")
		cl, ce, cc := weirIn(t, s.env, "", "backfills", "cancel", "2")
		br, bre, brc := weirIn(t, s.remoteEnv(), "", "dags", "backfill", "hourly", "-s", "2026-01-02", "-e", "2026-01-02T02:00:00Z", "--max-active-runs", "2")
		cr, cre, crc := weirIn(t, s.remoteEnv(), "", "backfills", "cancel", "3")
		dates := strings.NewReplacer("2026-01-02", "2026-01-01", "backfill 3", "backfill 2")
		if bc != 0 || brc != 0 || cc != 0 || crc != 0 || dates.Replace(br) != bl || bre != be || dates.Replace(cr) != cl || cre != ce {
			t.Errorf("backfill and cancel differ:\nlocal  %d %q %q, %d %q %q\nremote %d %q %q, %d %q %q", bc, bl, be, cc, cl, ce, brc, br, bre, crc, cr, cre)
		}
	})
}

// fill puts suffix where the arguments have %s.
func fill(args []string, suffix string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "%s", suffix)
	}
	return out
}

// localNames are the names the local run of a change uses.
var localNames = regexp.MustCompile(`\b([rpvcud])l\b`)

// swap turns the local run's names (rl, pl, vl, cl, ul, dl) into the remote's.
func swap(s string) string { return localNames.ReplaceAllString(s, "${1}r") }

// seedBackfills adds the DAGs daily (paused, with a backfill of three
// days: backfill 1) and hourly (unpaused), both from 2026-01-01 with
// catchup, so their next runs do not depend on the time of day; dl and
// dr to delete; watched, whose asset feed has the watcher poll.
func seedBackfills(t *testing.T, s *surfaces) {
	t.Helper()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, d := range []core.DAG{
		{DagID: "daily", Schedule: "@daily", StartDate: &start, Catchup: true, Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}},
		{DagID: "hourly", Schedule: "@hourly", StartDate: &start, Catchup: true, Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}},
		{DagID: "dl", Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}}, {DagID: "dr", Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}},
	} {
		if _, _, err := s.st.DagSync(t.Context(), &store.DagSyncParams{Spec: d, Hash: d.DagID, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	watched := core.DAG{DagID: "watched", Assets: []core.Asset{{Name: "feed", URI: "s3://lake/feed", Watchers: []core.AssetWatcher{
		{Name: "poll", Trigger: core.TriggerSpec{Type: "command", Kwargs: json.RawMessage(`{"command": "true"}`)}}}}},
		Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}}
	if _, _, err := s.st.DagSync(t.Context(), &store.DagSyncParams{Spec: watched, Hash: "watched", Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.st.AssetSync(t.Context(), &store.AssetSyncParams{Spec: &watched, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	s.run("dags", "pause", "daily")
	s.run("dags", "unpause", "hourly")
	s.run("dags", "backfill", "daily", "-s", "2026-01-01", "-e", "2026-01-03")
}
