package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
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
