package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/s3test"
)

// exampleSQLiteEnv defines the example_sqlite connection of
// examples/dags/sensor_sql.yaml as a user would: outside any DAG, a SQLite
// file in the Weir home.
func exampleSQLiteEnv(home string) string {
	return "WEIR_CONN_EXAMPLE_SQLITE=sqlite://" + filepath.Join(home, "example.db")
}

// sensorExamples runs the deferral examples of examples/dags (sensor_*.yaml,
// defer_shell.yaml) in TestStandaloneExamples's standalone, each from a
// trigger over the REST API, and checks what a user sees: every task
// succeeds on its first try and each sensor's event is its XCom.
func sensorExamples(t *testing.T, s *standalone) {
	t.Run("every example DAG loads without import errors", func(t *testing.T) {
		t.Parallel()
		api := s.api.with(t)
		for _, id := range []string{"sensor_time", "sensor_file", "sensor_http", "sensor_sql", "sensor_s3",
			"sensor_external_task", "sensor_command", "defer_shell"} {
			api.WaitDAG(id)
		}
		var errs struct {
			Total int             `json:"total_entries"`
			List  json.RawMessage `json:"import_errors"`
		}
		api.Get("/api/v2/importErrors", &errs)
		if errs.Total != 0 {
			t.Errorf("examples/dags has %d import errors: %s", errs.Total, errs.List)
		}
	})

	// succeeded waits for a run and checks that it and every task of it
	// succeeded on try 1.
	succeeded := func(t *testing.T, dagID, runID string) *client {
		t.Helper()
		api := s.api.with(t)
		run := api.WaitRunDone(dagID, runID)
		if run.State != core.RunSuccess {
			t.Fatalf("run %s of %s = %s, want success:\n%s", runID, dagID, run.State, api.DescribeRun(dagID, runID, run))
		}
		for _, ti := range api.TaskInstances(dagID, runID) {
			if ti.State != core.TISuccess || ti.TryNumber != 1 {
				t.Errorf("%s.%s = %s on try %d, want success on try 1", dagID, ti.TaskID, ti.State, ti.TryNumber)
			}
		}
		return api
	}
	// runExample triggers dagID with conf and checks it succeeded.
	runExample := func(t *testing.T, dagID, runID string, conf map[string]any) *client {
		t.Helper()
		api := s.api.with(t)
		api.WaitDAG(dagID)
		api.Trigger(dagID, runID, conf)
		return succeeded(t, dagID, runID)
	}
	logHas := func(t *testing.T, api *client, dagID, runID, taskID string, wants ...string) {
		t.Helper()
		log := api.Log(dagID, runID, taskID, 1)
		for _, w := range wants {
			if !strings.Contains(log, w) {
				t.Errorf("log of %s.%s lacks %q:\n%s", dagID, taskID, w, log)
			}
		}
	}

	t.Run("sensor_time waits for a moment, then a templated delta", func(t *testing.T) {
		t.Parallel()
		api := runExample(t, "sensor_time", "e2e-time", map[string]any{"cool_down": "1s"})
		logHas(t, api, "sensor_time", "e2e-time", "report", `interval ended: {"moment":"`, `cooled down:    {"moment":"`)
	})
	t.Run("sensor_file fires when deliver drops the CSV", func(t *testing.T) {
		t.Parallel()
		landing := t.TempDir()
		api := runExample(t, "sensor_file", "e2e-file", map[string]any{"landing": landing})
		logHas(t, api, "sensor_file", "e2e-file", "count_rows", `"count":1`, "rows in "+landing+"/orders-", ".csv: 2")
	})
	t.Run("sensor_http polls the api-server's own version endpoint", func(t *testing.T) {
		t.Parallel()
		var v struct {
			Version string `json:"version"`
		}
		s.api.with(t).Get("/api/v2/version", &v)
		api := runExample(t, "sensor_http", "e2e-http", map[string]any{"api_url": s.api.Base()})
		logHas(t, api, "sensor_http", "e2e-http", "show_version", fmt.Sprintf(`the API answered {"status":200,"result":%q}`, v.Version))
	})
	t.Run("sensor_sql waits for the partition a sibling task loads", func(t *testing.T) {
		t.Parallel()
		api := runExample(t, "sensor_sql", "e2e-sql", nil)
		logHas(t, api, "sensor_sql", "e2e-sql", "report", `is there: {"loaded_by":"e2e-sql","parts":1}`)
	})
	t.Run("sensor_external_task waits for hello's run of the same id", func(t *testing.T) {
		t.Parallel()
		api := s.api.with(t)
		api.WaitDAG("sensor_external_task")
		api.WaitDAG("hello")
		api.Trigger("sensor_external_task", "e2e-ext", nil)
		if ti := api.WaitTIState("sensor_external_task", "e2e-ext", "wait_for_hello", core.TIDeferred); ti.TryNumber != 1 {
			t.Errorf("wait_for_hello deferred on try %d, want 1", ti.TryNumber)
		}
		api.Trigger("hello", "e2e-ext", nil)
		api.WaitRunSuccess("hello", "e2e-ext")
		succeeded(t, "sensor_external_task", "e2e-ext")
		logHas(t, api, "sensor_external_task", "e2e-ext", "after_hello",
			`hello is done: {"dag_id":"hello","run_id":"e2e-ext","task_id":"done","map_index":-1,"state":"success"}`)
	})
	t.Run("sensor_command resumes with the script's JSON line", func(t *testing.T) {
		t.Parallel()
		api := runExample(t, "sensor_command", "e2e-command", nil)
		logHas(t, api, "sensor_command", "e2e-command", "consume", `consuming {"queue":"orders","waiting":3}`)
	})
	t.Run("defer_shell's bash task defers and resumes in the same try", func(t *testing.T) {
		t.Parallel()
		api := runExample(t, "defer_shell", "e2e-defer", map[string]any{"wait": "1s"})
		logHas(t, api, "defer_shell", "e2e-defer", "submit_and_collect",
			"submitted job-1-", "waiting 1s in the triggerer", `resumed (collect) with {"job":"job-1-`)
	})
}

// TestSensorS3Example runs examples/dags/sensor_s3.yaml against a real
// S3-compatible server (SeaweedFS; skipped without it unless
// WEIR_REQUIRE_S3=1): its sensor waits, deferred, until two parquet parts
// of the run's date are in the bucket, and list_parts reads their keys.
func TestSensorS3Example(t *testing.T) {
	t.Parallel()
	lake := s3test.URL(t, "")
	bucket := strings.SplitN(strings.TrimPrefix(lake, "s3://"), "@", 2)[1]
	bucket = bucket[:strings.IndexAny(bucket, "/?")]
	s := startStandalone(t, t.TempDir(), examplesDir(), "WEIR_CONN_EXAMPLE_LAKE="+lake)
	s.api.WaitDAG("sensor_s3")
	run := s.api.Trigger("sensor_s3", "e2e-s3", nil)
	s.api.WaitTIState("sensor_s3", "e2e-s3", "wait_for_parts", core.TIDeferred)
	day := run.LogicalDate.UTC().Format("2006-01-02")
	for _, part := range []string{"part-1.parquet", "part-2.parquet"} {
		if _, err := s3test.Client(t).PutObject(t.Context(), bucket, "landing/"+day+"/"+part,
			bytes.NewReader([]byte("PAR1")), 4, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if done := s.api.WaitRunDone("sensor_s3", "e2e-s3"); done.State != core.RunSuccess {
		t.Fatalf("run = %s, want success:\n%s", done.State, s.api.DescribeRun("sensor_s3", "e2e-s3", done))
	}
	log := s.api.Log("sensor_s3", "e2e-s3", "list_parts", 1)
	for _, key := range []string{"landing/" + day + "/part-1.parquet", "landing/" + day + "/part-2.parquet"} {
		if !strings.Contains(log, key) {
			t.Errorf("list_parts' log lacks %s:\n%s", key, log)
		}
	}
}
