package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// TestSensorsWaitInTheTriggererAndOnAWorker runs a deferrable file
// sensor (it starts in the triggerer: no worker step until the file
// appears), a poke sensor on the same file (it waits on a worker), and a
// task reading the deferrable sensor's event as its XCom.
func TestSensorsWaitInTheTriggererAndOnAWorker(t *testing.T) {
	t.Parallel()
	dags, home, data := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "sensors.yaml"), `dag_id: sensors
tasks:
  - task_id: wait
    operator: sensor
    trigger:
      type: file
      path: `+data+`/*.csv
    poke_interval: 1s
    timeout: 10m
  - task_id: poke
    operator: sensor
    mode: poke
    trigger: {type: file, path: "`+data+`/*.csv"}
    poke_interval: 1s
  - task_id: use
    operator: bash
    depends_on: [wait]
    bash_command: echo "got $(weir xcom pull --task wait)"
`)
	s := startStandalone(t, home, dags)
	s.api.WaitDAG("sensors")
	s.api.Trigger("sensors", "r1", nil)

	wait := s.api.WaitTIState("sensors", "r1", "wait", core.TIDeferred)
	s.api.WaitTIState("sensors", "r1", "poke", core.TIRunning)
	if wait.Hostname != "" || wait.WorkerID != "" {
		t.Errorf("the deferrable sensor ran on %q/%q before its trigger fired; want no worker step", wait.Hostname, wait.WorkerID)
	}
	if err := os.WriteFile(filepath.Join(data, "in.csv"), []byte("a,b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := s.api.WaitRunDone("sensors", "r1")
	if run.State != core.RunSuccess {
		t.Fatalf("run = %s, want success:\n%s", run.State, s.api.DescribeRun("sensors", "r1", run))
	}
	for _, task := range []string{"wait", "poke"} {
		if ti := s.api.TaskInstance("sensors", "r1", task); ti.TryNumber != 1 {
			t.Errorf("%s took %d tries, want 1", task, ti.TryNumber)
		}
	}
	if log := s.api.Log("sensors", "r1", "use", 1); !strings.Contains(log, `"count":1`) || !strings.Contains(log, "in.csv") {
		t.Errorf("use did not read wait's event as its XCom:\n%s", log)
	}
	if log := s.api.Log("sensors", "r1", "poke", 1); !strings.Contains(log, "poking a file trigger") {
		t.Errorf("the poke sensor's log does not show it poking:\n%s", log)
	}
}

// A sensor's timeout fails it without retries, in either mode (Airflow's
// AirflowSensorTimeout), or skips it with soft_fail; what follows a
// skipped sensor is skipped too.
func TestSensorTimeoutsFailWithoutRetries(t *testing.T) {
	t.Parallel()
	dags, home, data := t.TempDir(), t.TempDir(), t.TempDir()
	sensor := func(id, extra string) string {
		return "  - task_id: " + id + "\n    operator: sensor\n    retries: 2\n    retry_delay: 0s\n    trigger: {type: file, path: \"" +
			data + "/never.csv\"}\n    poke_interval: 1s\n    timeout: 2s\n" + extra
	}
	writeFile(t, filepath.Join(dags, "timeouts.yaml"), "dag_id: timeouts\ntasks:\n"+
		sensor("deferred", "")+sensor("deferred_soft", "    soft_fail: true\n")+
		sensor("poked", "    mode: poke\n")+sensor("poked_soft", "    mode: poke\n    soft_fail: true\n")+
		"  - {task_id: after, operator: noop, depends_on: [deferred_soft]}\n")
	s := startStandalone(t, home, dags)
	s.api.WaitDAG("timeouts")
	s.api.Trigger("timeouts", "r1", nil)
	run := s.api.WaitRunDone("timeouts", "r1")
	if run.State != core.RunFailed {
		t.Fatalf("run = %s, want failed:\n%s", run.State, s.api.DescribeRun("timeouts", "r1", run))
	}
	for task, want := range map[string]core.TIState{"deferred": core.TIFailed, "poked": core.TIFailed,
		"deferred_soft": core.TISkipped, "poked_soft": core.TISkipped, "after": core.TISkipped} {
		ti := s.api.TaskInstance("timeouts", "r1", task)
		if ti.State != want || (task != "after" && ti.TryNumber != 1) {
			t.Errorf("%s: %s after %d tries, want %s after 1 (retries: 2)", task, ti.State, ti.TryNumber, want)
		}
	}
	for task, want := range map[string]string{"deferred": "fails it without retries", "poked": "did not fire within the sensor's timeout (2s)",
		"deferred_soft": "soft_fail: the sensor is skipped", "poked_soft": "soft_fail: the sensor is skipped"} {
		if log := s.api.Log("timeouts", "r1", task, 1); !strings.Contains(log, want) {
			t.Errorf("%s's log lacks %q:\n%s", task, want, log)
		}
	}
}
