package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	_ "modernc.org/sqlite" // database/sql driver "sqlite" to make the watched table

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/s3test"
)

// TestEveryBuiltinTriggerResumesItsSensor runs one deferrable sensor per
// built-in trigger type in standalone, on SQLite and on PostgreSQL: each
// waits in the triggerer until what it watches happens (a moment, a file,
// an HTTP answer, a row, an object, another DAG's task, a process's line),
// then resumes on a worker with the trigger's event as its XCom.
func TestEveryBuiltinTriggerResumesItsSensor(t *testing.T) {
	t.Parallel()
	onEachEngine(t, runBuiltinSensors)
}

func runBuiltinSensors(t *testing.T, env []string) {
	dags, home, data := t.TempDir(), t.TempDir(), t.TempDir()
	lite := filepath.Join(data, "ready.db")
	lake := s3test.URL(t, "")
	env = append(env, "WEIR_CONN_LITE=sqlite:///"+lite, "WEIR_CONN_LAKE="+lake)
	writeFile(t, filepath.Join(dags, "upstream.yaml"), "dag_id: upstream\ntasks:\n  - task_id: done\n    operator: noop\n")
	s := startStandalone(t, home, dags, env...)
	moment := time.Now().UTC().Add(2 * time.Second).Format(time.RFC3339)
	sensor := func(id, trigger string) string {
		return fmt.Sprintf("  - task_id: %s\n    operator: sensor\n    poke_interval: 1s\n    timeout: 10m\n    trigger: %s\n", id, trigger)
	}
	writeFile(t, filepath.Join(dags, "sensors.yaml"), "dag_id: builtins\ntasks:\n"+
		fmt.Sprintf("  - task_id: at_moment\n    operator: sensor\n    trigger: {type: datetime, moment: %q}\n", moment)+
		"  - task_id: after_delta\n    operator: sensor\n    trigger: {type: timedelta, delta: 1s}\n"+
		sensor("file_appears", fmt.Sprintf("{type: file, path: %q, min_size: 1}", filepath.Join(data, "*.csv")))+
		sensor("http_ready", fmt.Sprintf("{type: http, url: %q, json_query: .version}", s.api.Base()+"/api/v2/version"))+
		sensor("row_ready", `{type: sql, conn_id: lite, sql: "SELECT count(*) AS n FROM ready"}`)+
		sensor("object_lands", `{type: s3_key, conn_id: lake, glob: "landing/*.parquet"}`)+
		sensor("upstream_done", `{type: external_task, dag_id: upstream, run_id: up1, task_id: done}`)+
		"  - task_id: process_says\n    operator: sensor\n    trigger: {type: command, command: \"sleep 1; echo '{\\\"n\\\": 42}'\"}\n")
	s.api.WaitDAG("builtins")
	s.api.WaitDAG("upstream")
	s.api.Trigger("builtins", "b1", nil)
	for _, task := range []string{"file_appears", "row_ready", "object_lands", "upstream_done"} {
		s.api.WaitTIState("builtins", "b1", task, core.TIDeferred)
	}

	// Make each watched thing happen.
	if err := os.WriteFile(filepath.Join(data, "in.csv"), []byte("a,b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+lite+"?_pragma=busy_timeout(10000)") // the sql trigger polls the same file
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE ready (x INTEGER); INSERT INTO ready VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	bucket := strings.SplitN(strings.TrimPrefix(lake, "s3://"), "@", 2)[1]
	bucket = bucket[:strings.IndexAny(bucket, "/?")]
	if _, err := s3test.Client(t).PutObject(context.Background(), bucket, "landing/part-0.parquet",
		bytes.NewReader([]byte("PAR1")), 4, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	s.api.Trigger("upstream", "up1", nil)

	run := s.api.WaitRunDone("builtins", "b1")
	if run.State != core.RunSuccess {
		t.Fatalf("run = %s, want success:\n%s", run.State, s.api.DescribeRun("builtins", "b1", run))
	}
	want := map[string]string{
		"at_moment": `"moment":"` + moment, "after_delta": `"moment":`, "file_appears": `in.csv`,
		"http_ready": `"status":200`, "row_ready": `"n":1`, "object_lands": `landing/part-0.parquet`,
		"upstream_done": `"state":"success"`, "process_says": `{"n":42}`,
	}
	for task, fragment := range want {
		ti := s.api.TaskInstance("builtins", "b1", task)
		var x core.XCom
		s.api.Get(runPath("builtins", "b1")+"/taskInstances/"+task+"/xcomEntries/return_value", &x)
		if ti.TryNumber != 1 || !strings.Contains(string(compactJSON(x.Value)), fragment) {
			t.Errorf("%s: try %d, event %s; want try 1 and an event containing %s", task, ti.TryNumber, x.Value, fragment)
		}
	}
}

// compactJSON removes insignificant space from a JSON value.
func compactJSON(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}
