package e2e

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// TestStandaloneExamples runs every example DAG in `weir standalone` on
// SQLite, triggered over the REST API, and checks what a user would look at:
// run and task states, tries, map indexes and logs.
func TestStandaloneExamples(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := startStandalone(t, home, examplesDir(), exampleSQLiteEnv(home))
	sensorExamples(t, s)         // examples_sensor_test.go
	emissionExamples(t, s, home) // examples_emission_test.go

	t.Run("hello renders its params and run context into the log", func(t *testing.T) {
		t.Parallel()
		api := s.api.with(t)
		api.WaitDAG("hello")
		api.Trigger("hello", "e2e-hello", map[string]any{"name": "e2e tester"})
		run := api.WaitRunSuccess("hello", "e2e-hello")
		log := api.Log("hello", "e2e-hello", "greet", 1)
		want := "Hello, e2e tester! Logical date " + run.LogicalDate.UTC().Format("2006-01-02") + ", run e2e-hello."
		if !strings.Contains(log, want) {
			t.Errorf("greet's log does not contain %q:\n%s", want, log)
		}
		if log := api.Log("hello", "e2e-hello", "done", 1); !strings.Contains(log, "try 1 of done in hello") {
			t.Errorf("done's log does not contain %q:\n%s", "try 1 of done in hello", log)
		}
	})

	t.Run("retries: flaky fails try 1 and succeeds on try 2", func(t *testing.T) {
		t.Parallel()
		api := s.api.with(t)
		api.WaitDAG("retries")
		api.Trigger("retries", "e2e-retries", nil)
		api.WaitRunSuccess("retries", "e2e-retries")
		tries := api.Tries("retries", "e2e-retries", "flaky")
		var got []string
		for _, ti := range tries {
			got = append(got, strconv.Itoa(ti.TryNumber)+":"+string(ti.State))
		}
		if len(tries) != 2 || tries[0].TryNumber != 1 || !failedTry(tries[0]) ||
			tries[1].TryNumber != 2 || tries[1].State != core.TISuccess {
			t.Errorf("tries of flaky = %v, want try 1 failed, then try 2 success", got)
		}
		if ti := api.TaskInstance("retries", "e2e-retries", "flaky"); ti.TryNumber != 2 || ti.State != core.TISuccess {
			t.Errorf("flaky is try %d %s, want try 2 success", ti.TryNumber, ti.State)
		}
		if log := api.Log("retries", "e2e-retries", "flaky", 1); !strings.Contains(log, "failing on purpose") {
			t.Errorf("log of flaky try 1 lacks %q:\n%s", "failing on purpose", log)
		}
		if log := api.Log("retries", "e2e-retries", "flaky", 2); !strings.Contains(log, "this is try 2") {
			t.Errorf("log of flaky try 2 lacks %q:\n%s", "this is try 2", log)
		}
	})

	t.Run("mapping expands literal lists, an upstream XCom and a cross product", func(t *testing.T) {
		t.Parallel()
		api := s.api.with(t)
		api.WaitDAG("mapping")
		api.Trigger("mapping", "e2e-mapping", nil)
		api.WaitRunSuccess("mapping", "e2e-mapping")
		indexes := map[string][]int{}
		for _, ti := range api.TaskInstances("mapping", "e2e-mapping") {
			if ti.State != core.TISuccess {
				t.Errorf("%s[%d] is %s, want success", ti.TaskID, ti.MapIndex, ti.State)
			}
			indexes[ti.TaskID] = append(indexes[ti.TaskID], ti.MapIndex)
		}
		want := map[string][]int{
			"make_list": {-1}, "square": {0, 1, 2}, "per_region": {0, 1, 2},
			"greet_all": {0, 1, 2, 3, 4, 5}, "summary": {-1},
		}
		if diff := cmp.Diff(want, indexes); diff != "" {
			t.Errorf("map indexes per task (-want +got):\n%s", diff)
		}
	})

	t.Run("trigger_rules: boom fails, its downstreams follow their rules, the run succeeds", func(t *testing.T) {
		t.Parallel()
		api := s.api.with(t)
		api.WaitDAG("trigger_rules")
		api.Trigger("trigger_rules", "e2e-rules", nil)
		api.WaitRunSuccess("trigger_rules", "e2e-rules")
		got := map[string]core.TIState{}
		for _, ti := range api.TaskInstances("trigger_rules", "e2e-rules") {
			got[ti.TaskID] = ti.State
		}
		want := map[string]core.TIState{
			"ok": core.TISuccess, "boom": core.TIFailed, "on_failure": core.TISuccess,
			"publish": core.TIUpstreamFailed, "cleanup": core.TISuccess, "summary": core.TISuccess,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("task states (-want +got):\n%s", diff)
		}
	})

	t.Run("alias_producer adds exports_us to alias exports, which runs alias_consumer", func(t *testing.T) {
		t.Parallel()
		api := s.api.with(t)
		api.WaitDAG("alias_producer")
		api.WaitDAG("alias_consumer")
		api.Trigger("alias_producer", "e2e-alias", map[string]any{"region": "us"})
		api.WaitRunSuccess("alias_producer", "e2e-alias")
		run, evs := api.waitAssetRun("alias_consumer", 1)
		if len(evs) != 1 || evs[0].Name != "exports_us" || evs[0].SourceTaskID != "export" ||
			!strings.Contains(string(evs[0].Extra), `"region":"us"`) {
			t.Errorf("events that triggered %s: %+v, want export's event of exports_us with region us", run.RunID, evs)
		}
		var alias store.AssetAlias
		api.Get("/api/v2/assets/aliases/exports", &alias)
		if len(alias.Assets) != 1 || alias.Assets[0].Name != "exports_us" {
			t.Errorf("alias exports = %+v, want it resolving to exports_us only", alias)
		}
	})

	t.Run("noop_chain runs noop and bash tasks with env", func(t *testing.T) {
		t.Parallel()
		api := s.api.with(t)
		api.WaitDAG("noop_chain")
		api.Trigger("noop_chain", "e2e-noop", nil)
		api.WaitRunSuccess("noop_chain", "e2e-noop")
		if log := api.Log("noop_chain", "e2e-noop", "work", 1); !strings.Contains(log, "hi from work") {
			t.Errorf("work's log lacks %q:\n%s", "hi from work", log)
		}
	})
}
