package weir

import (
	"encoding/json"
	"time"

	"github.com/weirflow/weir/internal/dagfile"
	"github.com/weirflow/weir/internal/operator"
)

// Sensor adds a task that waits on the trigger spec (operator "sensor", as
// in DAG files; docs/triggers.md lists the types): by default it starts
// deferred in the triggerer, holding no worker slot, and the trigger's
// event becomes its return_value XCom. PokeMode waits on a worker
// instead; PokeInterval and SensorTimeout tune the wait. String kwargs are
// templates rendered when each try starts ({{ ds }}, params, conf).
//
//	files, err := weir.NewTrigger("file", map[string]any{"path": "/data/in/*.csv"})
//	...
//	dag.Sensor("wait_for_file", files, weir.PokeInterval(30*time.Second), weir.SensorTimeout(time.Hour))
func (d *DAG) Sensor(id string, spec TriggerSpec, opts ...TaskOption) *Task {
	trig := map[string]any{}
	bad := len(spec.Kwargs) > 0 && json.Unmarshal(spec.Kwargs, &trig) != nil
	_, typeKwarg := trig["type"]
	trig["type"] = spec.Type
	t := d.add(id, operator.Sensor, map[string]any{"trigger": trig}, opts)
	switch {
	case bad:
		t.problem("trigger", "the kwargs of a %s trigger must be a JSON object", spec.Type)
	case typeKwarg:
		t.problem("trigger", "a sensor's trigger kwargs cannot hold \"type\": it names the trigger type")
	}
	return t
}

// PokeMode makes a sensor wait on a worker, running its trigger inside
// the try (Airflow's mode="poke"), instead of in the triggerer.
func PokeMode() TaskOption {
	return arg(operator.Sensor, "mode", "PokeMode", dagfile.SensorPoke)
}

// PokeInterval is the time between a polling sensor's checks, passed to
// its trigger as the poke_interval kwarg (default 5s).
func PokeInterval(d time.Duration) TaskOption {
	return arg(operator.Sensor, "poke_interval", "PokeInterval", d.String())
}

// SensorTimeout fails a sensor that has waited longer than d, without
// retries (Airflow's AirflowSensorTimeout; SoftFail skips it instead): in
// the triggerer from the deferral, in poke mode from the try's start.
func SensorTimeout(d time.Duration) TaskOption {
	return arg(operator.Sensor, "timeout", "SensorTimeout", d.String())
}

// SoftFail makes a sensor whose timeout passes end skipped rather than
// failed (Airflow's soft_fail=True).
func SoftFail() TaskOption {
	return arg(operator.Sensor, "soft_fail", "SoftFail", true)
}
