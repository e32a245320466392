package core

import (
	"encoding/json"
	"fmt"
	"time"
)

// DAG is the serialized, validated definition of a DAG, produced by the YAML
// loader or the Go SDK. It is what a dag_version stores (as JSON) and what
// the scheduler and workers read; it never holds code.
type DAG struct {
	DagID       string `json:"dag_id"`
	Description string `json:"description,omitempty"`
	Schedule    string `json:"schedule,omitempty"` // "" = none; preset, cron or duration
	// Timetable names how a cron Schedule becomes runs, after Airflow's
	// classes: "CronTriggerTimetable" (a run at each fire time, its logical
	// date) or "CronDataIntervalTimetable" (a run for each interval between
	// fire times, once it has ended); "" = the deployment's default
	// ([scheduler] create_cron_data_intervals), which the DAG processor
	// records in the DAG.
	Timetable string `json:"timetable,omitempty"`
	// TimetableInterval is CronTriggerTimetable's interval (Airflow's
	// argument): a run's data interval ends at its fire time and starts
	// this long before, at its logical date; 0 = the fire time alone.
	TimetableInterval Duration `json:"timetable_interval,omitempty"`
	// RunImmediately is CronTriggerTimetable's run_immediately; nil = true.
	RunImmediately *RunImmediately `json:"run_immediately,omitempty"`
	StartDate      *time.Time      `json:"start_date,omitempty"`
	EndDate        *time.Time      `json:"end_date,omitempty"`
	Catchup        bool            `json:"catchup,omitempty"`
	// IsPausedUponCreation, when set, is whether the DAG starts paused the
	// first time it is recorded (Airflow's DAG argument); nil = [core]
	// dags_are_paused_at_creation.
	IsPausedUponCreation *bool          `json:"is_paused_upon_creation,omitempty"`
	MaxActiveRuns        int            `json:"max_active_runs,omitempty"`  // 0 = default (16)
	MaxActiveTasks       int            `json:"max_active_tasks,omitempty"` // 0 = default (16)
	Params               map[string]any `json:"params,omitempty"`
	// ParamDescriptions documents params (name → text), shown by the web
	// UI's trigger form.
	ParamDescriptions map[string]string `json:"param_descriptions,omitempty"`
	Tags              []string          `json:"tags,omitempty"`
	Timezone          string            `json:"timezone,omitempty"` // IANA name; "" = UTC
	// TemplateSyntax is the language of the DAG's templates: jinja or go
	// ("" = go, for DAGs stored before the choice existed). The loader
	// always sets it, detecting it when the file does not say.
	TemplateSyntax TemplateSyntax `json:"template_syntax,omitempty"`
	Tasks          []Task         `json:"tasks"`
	FileLoc        string         `json:"fileloc,omitempty"` // source file, or "go:<binary>" for SDK DAGs
	// AssetSchedule makes the DAG run when every listed asset has a new
	// event since its last asset-triggered run (Airflow's schedule=[a, b]).
	// A DAG has a time Schedule or an AssetSchedule, not both, unless
	// AssetOrTime.
	AssetSchedule []AssetRef `json:"asset_schedule,omitempty"`
	// AssetCondition, when set, is a conditional asset schedule (any-of,
	// all-of, nested): the DAG runs when its queued events meet it, and
	// AssetSchedule lists its references (docs/assets.md#conditional-schedules).
	AssetCondition *AssetCondition `json:"asset_condition,omitempty"`
	// AssetOrTime makes a DAG with both a time Schedule and an asset
	// schedule run on either: each time the schedule fires, and each time
	// its assets meet their schedule (Airflow's AssetOrTimeSchedule).
	AssetOrTime bool `json:"asset_or_time,omitempty"`
	// AssetRuns says how queued asset events become runs: coalesced into
	// one run (the default), one run per partition key, or one run per
	// event (docs/emission.md#consumers).
	AssetRuns AssetRunMode `json:"asset_runs,omitempty"`
	// Assets are the assets the DAG's tasks and schedule refer to.
	Assets []Asset `json:"assets,omitempty"`
	// Callbacks run when a run ends (on_success, on_failure), as work
	// items of their own (docs/emission.md#callbacks).
	Callbacks *Callbacks `json:"callbacks,omitempty"`
}

// Task is one node of a DAG.
type Task struct {
	TaskID                  string            `json:"task_id"`
	Operator                string            `json:"operator"` // bash | http | sql | noop | go
	DependsOn               []string          `json:"depends_on,omitempty"`
	TriggerRule             TriggerRule       `json:"trigger_rule,omitempty"` // "" = all_success
	Retries                 int               `json:"retries,omitempty"`
	RetryDelay              Duration          `json:"retry_delay,omitempty"` // 0 = 5m default applied by loader
	RetryExponentialBackoff bool              `json:"retry_exponential_backoff,omitempty"`
	MaxRetryDelay           Duration          `json:"max_retry_delay,omitempty"`
	ExecutionTimeout        Duration          `json:"execution_timeout,omitempty"`
	Queue                   string            `json:"queue,omitempty"` // "" = "default"
	Pool                    string            `json:"pool,omitempty"`  // "" = "default_pool"
	PoolSlots               int               `json:"pool_slots,omitempty"`
	PriorityWeight          int               `json:"priority_weight,omitempty"`
	Env                     map[string]string `json:"env,omitempty"`
	// Args are the operator's fields, named as Airflow's operators name them
	// (bash_command; conn_id, sql; http_conn_id, endpoint, method, data,
	// headers; python_callable-like "function" for go). String values are
	// templates rendered at run time.
	Args map[string]any `json:"args,omitempty"`
	// Expand maps an argument name to what it is mapped over: a literal list,
	// or an XComRef to an upstream task's return value. Several entries give
	// the cross product. Nil means the task is not mapped.
	Expand map[string]ExpandSource `json:"expand,omitempty"`
	// Iterate names the stream producer this task is lazily mapped over
	// (docs/streaming.md#lazy-expansion): one instance per item of the
	// producer's stream, created as items arrive (map_index = sequence
	// index), while the producer still runs. The producer is a deferrable
	// sensor whose trigger streams, or a task with Stream set. "" = none.
	Iterate string `json:"iterate,omitempty"`
	// Stream marks a task whose try pushes items to its stream
	// (tc.Stream().Push, weir stream push): a producer Iterate may name.
	Stream bool `json:"stream,omitempty"`
	// Inlets are the assets the task reads; Outlets the assets it updates
	// (each concrete outlet gets an asset event when the task succeeds).
	Inlets  []AssetRef `json:"inlets,omitempty"`
	Outlets []AssetRef `json:"outlets,omitempty"`
	// Connections are connection ids the task reads besides its conn_id or
	// http_conn_id argument (DeclaredConnections).
	Connections []string `json:"connections,omitempty"`
	// StartTrigger, when set, makes each try begin deferred on this
	// trigger, in the triggerer, without a first worker step
	// (start_from_trigger); it resumes on a worker with NextMethod. Its
	// string kwargs are templates rendered when the try starts.
	StartTrigger *Deferral `json:"start_trigger,omitempty"`
	// Callbacks run when the task's tries start or end
	// (docs/emission.md#callbacks).
	Callbacks *Callbacks `json:"callbacks,omitempty"`
}

// ExpandSource is what one mapped argument iterates: exactly one of Values
// (a literal list) or XCom (an upstream task's XCom, a list or a map) is set.
type ExpandSource struct {
	Values []any    `json:"values,omitzero"` // omitzero: an empty list (skip the task) survives a round trip
	XCom   *XComRef `json:"xcom,omitempty"`
}

// XComRef names an upstream task's XCom value.
type XComRef struct {
	TaskID string `json:"task_id"`
	Key    string `json:"key,omitempty"` // "" = return_value
}

// Mapped reports whether the task is expanded at run time.
func (t *Task) Mapped() bool { return len(t.Expand) > 0 }

// Iterates reports whether the task is lazily mapped over a stream.
func (t *Task) Iterates() bool { return t.Iterate != "" }

// HasMapIndexes reports whether the task's instances carry map indexes:
// it is mapped (Expand) or iterates over a stream.
func (t *Task) HasMapIndexes() bool { return t.Mapped() || t.Iterates() }

// Sensor args naming a streaming operator's handler
// (docs/streaming.md#streaming-operators).
const (
	// ArgHandleCommand is a shell command reading the events as JSON lines.
	ArgHandleCommand = "handle_command"
	// ArgHandleFunction is a registered Go handler called once per event.
	ArgHandleFunction = "handle_function"
)

// ArgSoftFail is the sensor arg that makes its timeout a skip (Airflow's
// soft_fail).
const ArgSoftFail = "soft_fail"

// SoftFail reports whether the task is a sensor that ends skipped, not
// failed, when its timeout passes (Airflow's soft_fail).
func (t *Task) SoftFail() bool {
	soft, _ := t.Args[ArgSoftFail].(bool)
	return t.Operator == "sensor" && soft
}

// Iterated reports whether a task of d iterates over taskID's stream
// (taskID is a producer: docs/streaming.md#lazy-expansion).
func (d *DAG) Iterated(taskID string) bool {
	for i := range d.Tasks {
		if d.Tasks[i].Iterate == taskID {
			return true
		}
	}
	return false
}

// HandlesStream reports whether the task is a streaming operator: a
// sensor with a handler (handle_command or handle_function) that handles
// its trigger's events one by one, in order, as they are committed.
func (t *Task) HandlesStream() bool {
	if t.Operator != "sensor" {
		return false
	}
	_, cmd := t.Args[ArgHandleCommand]
	_, fn := t.Args[ArgHandleFunction]
	return cmd || fn
}

// ScheduleSummary describes when the DAG runs, for people (Airflow's
// timetable_summary): its time schedule ("" for none), its asset schedule
// as Airflow writes a condition ("Asset: orders & customers", "Asset:
// (a | b) & c"), or both ("@daily or Asset: orders").
func (d *DAG) ScheduleSummary() string {
	if len(d.AssetSchedule) == 0 {
		return d.Schedule
	}
	cond := d.AssetCondition
	if cond == nil {
		cond = &AssetCondition{}
		for i := range d.AssetSchedule {
			cond.All = append(cond.All, AssetCondition{Ref: &d.AssetSchedule[i]})
		}
	}
	assets := "Asset: " + cond.String()
	if d.Schedule != "" {
		return d.Schedule + " or " + assets
	}
	return assets
}

// Task returns the task with the given id, or nil.
func (d *DAG) Task(id string) *Task {
	for i := range d.Tasks {
		if d.Tasks[i].TaskID == id {
			return &d.Tasks[i]
		}
	}
	return nil
}

// Downstream returns, for every task id, the ids of tasks that depend on it.
func (d *DAG) Downstream() map[string][]string {
	out := make(map[string][]string, len(d.Tasks))
	for _, t := range d.Tasks {
		for _, up := range t.DependsOn {
			out[up] = append(out[up], t.TaskID)
		}
	}
	return out
}

// Location returns the DAG's timezone, UTC when unset or unknown.
func (d *DAG) Location() *time.Location {
	if d.Timezone == "" {
		return time.UTC
	}
	loc, err := time.LoadLocation(d.Timezone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// RunImmediately is CronTriggerTimetable's run_immediately: it decides a
// DAG's first scheduled run without catchup. Always (the zero value,
// JSON true): the latest fire time already past (not before start_date)
// runs at once. Never (false): as Airflow's False, the past fire time only
// when it is at most a tenth of the schedule's step old (five minutes at
// least), else the next.
// Within (a duration string): the past fire time runs if it was at most
// that long ago, else the next.
type RunImmediately struct {
	Never  bool
	Within Duration
}

// MarshalJSON encodes r as Airflow's argument: true, false or a duration.
func (r RunImmediately) MarshalJSON() ([]byte, error) {
	if r.Within > 0 {
		return r.Within.MarshalJSON()
	}
	return json.Marshal(!r.Never)
}

// UnmarshalJSON accepts true, false or a positive duration string.
func (r *RunImmediately) UnmarshalJSON(b []byte) error {
	var on bool
	if err := json.Unmarshal(b, &on); err == nil {
		*r = RunImmediately{Never: !on}
		return nil
	}
	var d Duration
	if err := d.UnmarshalJSON(b); err != nil || d <= 0 {
		return fmt.Errorf("run_immediately must be true, false or a positive duration such as \"30m\", not %s", b)
	}
	*r = RunImmediately{Within: d}
	return nil
}

// DefaultXComKey is the key a task's return value is stored under.
const DefaultXComKey = "return_value"

// Duration is a time.Duration that serializes as a Go duration string
// ("90s", "5m") and accepts the same on input.
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalJSON encodes the duration as a string such as "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON accepts a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"30s\" or \"5m\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}
