package dagfile

import (
	"encoding/json"
	"maps"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// Sensor modes.
const (
	// SensorDeferrable waits in the triggerer: the task starts from its
	// trigger, holding no worker slot (the default).
	SensorDeferrable = "deferrable"
	// SensorPoke waits on a worker, running the trigger in the try.
	SensorPoke = "poke"
)

// BuildSensor turns a sensor task's fields (Args trigger, mode,
// poke_interval, timeout, as a DAG file writes them) into its canonical
// form: in deferrable mode the task starts from its trigger
// (StartTrigger, timeout as the deferral's); in poke mode Args hold the
// trigger {type, kwargs} and the timeout (a sensor's, failing without
// retries: operator.SensorTimedOut, as a deferrable one's does), and
// soft_fail is kept in Args in both modes.
// poke_interval is passed to the trigger as its poke_interval kwarg.
// Problems are returned with paths relative to the task.
func BuildSensor(t *core.Task) []Problem {
	var ps problems
	args := t.Args
	raw, _ := args["trigger"].(map[string]any)
	typ, _ := raw["type"].(string)
	switch {
	case raw == nil:
		ps.add("trigger", "is required for sensor tasks: {type: <trigger type>, <kwargs>...} (docs/triggers.md)")
	case typ == "":
		ps.add("trigger.type", "is required: the trigger type to wait on (docs/triggers.md)")
	}
	kwargs := maps.Clone(raw)
	delete(kwargs, "type")
	if kwargs == nil {
		kwargs = map[string]any{}
	}
	if pi, ok := args["poke_interval"].(string); ok && pi != "" {
		if d, err := time.ParseDuration(pi); err != nil || d <= 0 {
			ps.add("poke_interval", "must be a positive duration such as \"30s\", got %q", pi)
		} else {
			kwargs["poke_interval"] = pi
		}
	}
	var timeout core.Duration
	if s, ok := args["timeout"].(string); ok && s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			ps.add("timeout", "must be a non-negative duration such as \"1h\", got %q", s)
		}
		timeout = core.Duration(d)
	}
	mode, _ := args["mode"].(string)
	if mode == "" {
		mode = SensorDeferrable
	}
	handler := sensorHandler(&ps, args, mode)
	b, err := json.Marshal(kwargs)
	if err != nil {
		ps.add("trigger", "kwargs cannot be stored as JSON: %v", err)
	}
	if len(ps) > 0 {
		return ps
	}
	spec := core.TriggerSpec{Type: typ, Kwargs: b}
	switch mode {
	case SensorDeferrable:
		t.StartTrigger = &core.Deferral{Trigger: spec, Timeout: timeout}
		t.Args = map[string]any{"mode": SensorDeferrable}
		maps.Copy(t.Args, handler)
	case SensorPoke:
		t.Args = map[string]any{"mode": SensorPoke, "trigger": map[string]any{"type": typ, "kwargs": kwargs}}
		if timeout > 0 {
			t.Args["timeout"] = timeout.D().String()
		}
	case "reschedule":
		ps.add("mode", "must be %s or %s, got %q (Airflow's reschedule: %s frees the worker slot between pokes the same way)",
			SensorDeferrable, SensorPoke, mode, SensorDeferrable)
	default:
		ps.add("mode", "must be %s or %s, got %q", SensorDeferrable, SensorPoke, mode)
	}
	if soft, _ := args[core.ArgSoftFail].(bool); soft && t.Args != nil {
		t.Args[core.ArgSoftFail] = true
	}
	return ps
}

// sensorHandler returns a sensor's stream handler args (at most one of
// handle_command and handle_function, a non-empty string, in deferrable
// mode only; docs/streaming.md#streaming-operators), reporting problems.
func sensorHandler(ps *problems, args map[string]any, mode string) map[string]any {
	out := map[string]any{}
	for _, k := range []string{core.ArgHandleCommand, core.ArgHandleFunction} {
		v, ok := args[k]
		if !ok {
			continue
		}
		if s, _ := v.(string); s == "" {
			ps.add(k, "must be a non-empty string: the %s", map[string]string{
				core.ArgHandleCommand:  "shell command that reads the events as JSON lines on stdin",
				core.ArgHandleFunction: "name of a registered Go stream handler"}[k])
			continue
		}
		out[k] = v
	}
	switch {
	case len(out) == 2:
		ps.add(core.ArgHandleFunction, "set either handle_command or handle_function, not both")
	case len(out) == 1 && mode == SensorPoke:
		ps.add("mode", "a sensor with a stream handler waits deferrable (its trigger's events are handled on a worker as they come), not in poke mode")
	}
	return out
}

// SensorTrigger returns the trigger a sensor waits on, whatever its mode.
func SensorTrigger(t *core.Task) (core.TriggerSpec, bool) {
	if t.StartTrigger != nil {
		return t.StartTrigger.Trigger, true
	}
	raw, ok := t.Args["trigger"].(map[string]any)
	if !ok {
		return core.TriggerSpec{}, false
	}
	typ, _ := raw["type"].(string)
	b, err := json.Marshal(raw["kwargs"])
	if err != nil {
		return core.TriggerSpec{}, false
	}
	return core.TriggerSpec{Type: typ, Kwargs: b}, true
}

// validateSensor checks a sensor in its canonical form (BuildSensor's).
func validateSensor(ps *problems, path string, t *core.Task) {
	mode, _ := t.Args["mode"].(string)
	_, poke := t.Args["trigger"].(map[string]any)
	n := len(t.Args) // but soft_fail, and a poke sensor's timeout
	if t.SoftFail() {
		n--
	}
	if _, timeout := t.Args["timeout"].(string); timeout && mode == SensorPoke {
		n--
	}
	switch {
	case mode == SensorDeferrable && t.StartTrigger != nil && n == 1:
	case mode == SensorDeferrable && t.StartTrigger != nil && n == 2 && t.HandlesStream():
	case mode == SensorPoke && t.StartTrigger == nil && poke && n == 2:
	default:
		ps.add(path+".trigger", "a sensor waits on one trigger: in deferrable mode its start trigger, in poke mode args {mode, trigger, timeout}")
	}
}

// checkTriggers validates the triggers task t waits on with check (the
// program's trigger types), reporting each at path.
func checkTriggers(ps *problems, path string, t *core.Task, check func(core.TriggerSpec) error) {
	field := ".start_trigger"
	if t.Operator == "sensor" {
		field = ".trigger"
	}
	if t.StartTrigger != nil && t.StartTrigger.Timeout < 0 {
		ps.add(path+field, "timeout must not be negative")
	}
	spec, ok := SensorTrigger(t)
	if !ok || check == nil {
		return
	}
	if err := check(spec); err != nil {
		ps.add(path+field, "%v", err)
	}
}
