package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// Every listing takes Airflow's -o/--output table|json|yaml|plain: json and
// yaml carry the REST API's snake_case names, plain is tab-separated rows
// without a header, and a format Weir does not know is refused before
// anything runs. Airflow's spellings --dag-id and `state-store clean` work.
func TestListingOutputFormats(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s *surfaces) {
		var asJSON []map[string]any
		if err := json.Unmarshal([]byte(s.run("dags", "list", "-o", "json")), &asJSON); err != nil ||
			len(asJSON) != 1 || asJSON[0]["dag_id"] != "etl" || asJSON[0]["is_paused"] != false {
			t.Errorf("dags list -o json = %v (%v), want etl with dag_id and is_paused", asJSON, err)
		}
		var asYAML []map[string]any
		if err := yaml.Unmarshal([]byte(s.run("dags", "list", "--output", "yaml")), &asYAML); err != nil ||
			len(asYAML) != 1 || asYAML[0]["dag_id"] != "etl" {
			t.Errorf("dags list -o yaml = %v (%v), want etl under dag_id", asYAML, err)
		}
		if got := s.run("dags", "list", "-o", "plain"); !strings.HasPrefix(got, "etl\tfalse\t") || strings.Contains(got, "DAG_ID") {
			t.Errorf("dags list -o plain = %q, want one tab-separated row and no header", got)
		}
		if got := s.run("dags", "list"); !strings.HasPrefix(got, "DAG_ID ") {
			t.Errorf("dags list = %q, want a table under a header", got)
		}
		s.run("dags", "trigger", "etl", "--run-id", "r9")
		if got := s.run("runs", "list", "--dag-id", "etl", "-o", "plain"); !strings.HasPrefix(got, "etl\tr9\tmanual\t") {
			t.Errorf("runs list --dag-id etl -o plain = %q, want run r9", got)
		}
		var ti []map[string]any
		if err := json.Unmarshal([]byte(s.run("tasks", "states-for-dag-run", "etl", "r9", "-o", "json")), &ti); err != nil ||
			len(ti) != 2 || ti[0]["dag_run_id"] != "r9" {
			t.Errorf("tasks states-for-dag-run -o json = %v (%v), want two instances of r9", ti, err)
		}
		if got := s.run("state-store", "clean", "--dry-run"); !strings.Contains(got, "0") {
			t.Errorf("state-store clean --dry-run = %q, want the cleanup-task-store summary", got)
		}
		code, _, stderr := weir(t, s.env, "runs", "list", "-o", "xml")
		if code == 0 || !strings.Contains(stderr, `"xml"`) || !strings.Contains(stderr, "table, json, yaml, plain") {
			t.Errorf("runs list -o xml: exit %d, stderr %q; want a refusal naming the formats", code, stderr)
		}
	})
}

// Airflow's inspection commands: tasks list, dags state (by run id or
// logical date), dags next-execution, and tasks clear with --downstream
// and a date range.
func TestAirflowInspectionCommands(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s *surfaces) {
		if got := s.run("tasks", "list", "etl", "-o", "plain"); got != "extract\tnoop\t-\tall_success\t0\nload\tnoop\textract\tall_success\t0\n" {
			t.Errorf("tasks list etl -o plain = %q, want extract then load (upstream extract), trigger rules with their default", got)
		}
		var tasks []map[string]any
		if err := json.Unmarshal([]byte(s.run("tasks", "list", "etl", "-o", "json")), &tasks); err != nil || len(tasks) != 2 || tasks[1]["task_id"] != "load" {
			t.Errorf("tasks list -o json = %v (%v)", tasks, err)
		}

		s.run("dags", "trigger", "etl", "--run-id", "r1")
		if got := strings.TrimSpace(s.run("dags", "state", "etl", "r1")); got != "queued" {
			t.Errorf("dags state etl r1 = %q, want queued", got)
		}
		day := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
		dated, err := service.New(service.Config{Store: s.st}).TriggerRun(t.Context(), core.System,
			runs.TriggerParams{DagID: "etl", RunID: "dated", LogicalDate: &day})
		if err != nil {
			t.Fatal(err)
		}
		tis, err := s.st.TaskInstanceList(t.Context(), &store.TaskInstanceListParams{DagRunID: dated.ID})
		if err != nil || len(tis) != 2 {
			t.Fatalf("instances of dated: %v (%v)", tis, err)
		}
		if _, err := s.st.TaskInstanceSetState(t.Context(), &store.TaskInstanceSetStateParams{IDs: []string{tis[0].ID, tis[1].ID}, To: core.TIFailed, Now: day}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.st.DagRunSetState(t.Context(), &store.DagRunSetStateParams{ID: dated.ID, To: core.RunFailed, Now: day}); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(s.run("dags", "state", "etl", "2026-01-02")); got != "failed" {
			t.Errorf("dags state etl 2026-01-02 = %q, want failed (the run of that logical date)", got)
		}
		if code, _, stderr := weir(t, s.env, "dags", "state", "etl", "nope"); code == 0 || !strings.Contains(stderr, `"nope"`) {
			t.Errorf("dags state of an unknown run: exit %d, %q", code, stderr)
		}
		if got := strings.TrimSpace(s.run("dags", "next-execution", "etl")); got != "None" {
			t.Errorf("next-execution of an unscheduled DAG = %q, want None", got)
		}
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		daily := core.DAG{DagID: "daily", Schedule: "@daily", StartDate: &start, Catchup: true, Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}}
		if _, _, err := s.st.DagSync(t.Context(), &store.DagSyncParams{Spec: daily, Hash: "d", Now: start}); err != nil {
			t.Fatal(err)
		}
		if got := s.run("dags", "next-execution", "daily", "-n", "2"); got != "2026-01-01T00:00:00Z\n2026-01-02T00:00:00Z\n" {
			t.Errorf("next-execution daily -n 2 = %q, want the first two days from start_date", got)
		}

		// r1 has a finished extract too; --downstream from extract within
		// 2026-01-02 takes both tasks of dated and nothing of r1.
		finishExtract(t, s.st, "r1")
		out := s.run("tasks", "clear", "etl", "-t", "extract", "--downstream", "-s", "2026-01-02", "-e", "2026-01-02", "--dry-run")
		if !strings.Contains(out, "would clear 2 task instances") || !strings.Contains(out, "load") || strings.Contains(out, "r1") {
			t.Errorf("tasks clear --downstream --start-date/--end-date --dry-run = %q, want extract and load of dated only", out)
		}
		if code, _, stderr := weir(t, s.env, "tasks", "clear", "etl", "-s", "yesterday"); code == 0 || !strings.Contains(stderr, "--start-date") {
			t.Errorf("tasks clear -s yesterday: exit %d, %q; want a refusal naming --start-date", code, stderr)
		}
	})
}
