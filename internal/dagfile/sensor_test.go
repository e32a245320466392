package dagfile_test

import (
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
	"github.com/weirflow/weir/internal/trigger/builtin"
)

func loadSensor(t *testing.T, task string) ([]core.DAG, error) {
	t.Helper()
	doc := "dag_id: s\ntasks:\n" + task
	return dagfile.LoadWith("s.yaml", []byte(doc), dagfile.Options{CheckTrigger: builtin.Registry().Check})
}

func TestSensorModes(t *testing.T) {
	dags, err := loadSensor(t, `  - task_id: wait
    operator: sensor
    trigger:
      type: timedelta
      delta: 30s
    timeout: 1h
  - task_id: poke
    operator: sensor
    mode: poke
    trigger: {type: datetime, moment: "2026-12-01T10:00:00Z"}
    timeout: 10m
`)
	if err != nil {
		t.Fatal(err)
	}
	wait, poke := dags[0].Task("wait"), dags[0].Task("poke")
	if st := wait.StartTrigger; st == nil || st.Trigger.Type != "timedelta" || string(st.Trigger.Kwargs) != `{"delta":"30s"}` ||
		st.Timeout.D().String() != "1h0m0s" || wait.Args["mode"] != "deferrable" {
		t.Errorf("deferrable sensor = %+v start %+v, want it to start from its timedelta trigger with a 1h timeout", wait, wait.StartTrigger)
	}
	spec, ok := dagfile.SensorTrigger(poke)
	if poke.StartTrigger != nil || !ok || spec.Type != "datetime" || poke.Args["timeout"] != "10m0s" || poke.ExecutionTimeout != 0 {
		t.Errorf("poke sensor = %+v, want its trigger and the sensor's timeout in args (not an execution timeout)", poke)
	}
}

func TestSensorRefusalsNameTheField(t *testing.T) {
	cases := map[string]struct{ task, want string }{
		"no type": {`  - task_id: w
    operator: sensor
    trigger: {delta: 30s}
`, "s.yaml:5:14: tasks[0].trigger.type: is required"},
		"unknown type": {`  - task_id: w
    operator: sensor
    trigger: {type: nope}
`, `s.yaml:5:14: tasks[0].trigger: unknown trigger type "nope"`},
		"bad kwarg": {`  - task_id: w
    operator: sensor
    trigger:
      type: timedelta
      delta: -5s
`, `tasks[0].trigger: trigger timedelta: kwarg "delta" must not be negative`},
		"unknown kwarg": {`  - task_id: w
    operator: sensor
    trigger: {type: timedelta, delta: 5s, deltaa: 1}
`, `unknown kwarg "deltaa"`},
		"negative timeout": {`  - task_id: w
    operator: sensor
    trigger: {type: timedelta, delta: 5s}
    timeout: -1m
`, `tasks[0].timeout: must be a non-negative duration such as "1h", got "-1m"`},
		"bad mode": {`  - task_id: w
    operator: sensor
    mode: reschedule
    trigger: {type: timedelta, delta: 5s}
`, `tasks[0].mode: must be deferrable or poke, got "reschedule" (Airflow's reschedule: deferrable frees the worker slot between pokes the same way)`},
		"no trigger": {`  - task_id: w
    operator: sensor
`, `tasks[0].trigger: is required`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := loadSensor(t, c.task)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("load = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestSensorUnaffectedByAnotherTasksError: a file with a problem in one
// task reports that problem alone, not made-up ones on its valid sensors.
func TestSensorUnaffectedByAnotherTasksError(t *testing.T) {
	_, err := loadSensor(t, `  - task_id: wait
    operator: sensor
    trigger: {type: sql, conn_id: db, sql: "SELECT 1"}
  - task_id: load
    operator: sql
    conn_id: db
    sql: [SELECT 1]
`)
	if err == nil {
		t.Fatal("a list as sql loaded")
	}
	if msg := err.Error(); !strings.Contains(msg, "tasks[1].sql: must be a string") || strings.Contains(msg, "tasks[0]") {
		t.Errorf("error = %v, want only load's sql reported", err)
	}
}
