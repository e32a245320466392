package dagfile

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

func goodDAG() core.DAG {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	return core.DAG{
		DagID: "sdk", Schedule: "@daily", StartDate: &start, FileLoc: "go:mybin",
		Tasks: []core.Task{
			{TaskID: "extract", Operator: "go", Args: map[string]any{"function": "extract"}},
			{TaskID: "load", Operator: "bash", DependsOn: []string{"extract"},
				Args:   map[string]any{"bash_command": "echo {{ .map_args.x }}"},
				Expand: map[string]core.ExpandSource{"x": {XCom: &core.XComRef{TaskID: "extract"}}}},
			{TaskID: "call", Operator: "http", Args: map[string]any{"headers": map[string]string{"A": "b"}, "method": "GET"}},
		},
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(d *core.DAG)
		want   string // "" = valid
	}{
		{name: "valid", modify: func(*core.DAG) {}},
		{name: "no schedule needs no start", modify: func(d *core.DAG) { d.Schedule, d.StartDate = "", nil }},
		{name: "empty dag id", modify: func(d *core.DAG) { d.DagID = "" },
			want: `go:mybin: dag "": dag_id: is required`},
		{name: "long dag id", modify: func(d *core.DAG) { d.DagID = strings.Repeat("a", 251) },
			want: "dag_id: must be at most 250 characters (it has 251)"},
		{name: "dag id charset", modify: func(d *core.DAG) { d.DagID = "a/b" },
			want: `dag_id: "a/b" may contain only letters, digits, dashes, dots and underscores`},
		{name: "no tasks", modify: func(d *core.DAG) { d.Tasks = nil }, want: "tasks: at least one task is required"},
		{name: "bad cron", modify: func(d *core.DAG) { d.Schedule = "* *" }, want: `schedule: invalid schedule "* *"`},
		{name: "schedule without start", modify: func(d *core.DAG) { d.StartDate = nil },
			want: "start_date: is required when a schedule is set"},
		{name: "bad timezone", modify: func(d *core.DAG) { d.Timezone = "Mars/Base" }, want: `timezone: unknown timezone "Mars/Base"`},
		{name: "empty connection id", modify: func(d *core.DAG) { d.Tasks[0].Connections = []string{"wh", ""} },
			want: `tasks[0].connections[1]: must be a literal connection id ("" is not)`},
		{name: "templated connection id", modify: func(d *core.DAG) { d.Tasks[0].Connections = []string{"{{ params.db }}"} },
			want: `tasks[0].connections[0]: must be a literal connection id`},
		{name: "negative retries", modify: func(d *core.DAG) { d.Tasks[0].Retries = -1 },
			want: `go:mybin: dag "sdk": tasks[0].retries: must be a non-negative integer`},
		{name: "negative timeout", modify: func(d *core.DAG) { d.Tasks[0].ExecutionTimeout = -1 },
			want: "tasks[0].execution_timeout: must not be negative"},
		{name: "trigger rule", modify: func(d *core.DAG) { d.Tasks[1].TriggerRule = "sometimes" },
			want: `tasks[1].trigger_rule: unknown trigger rule "sometimes"`},
		{name: "unknown operator", modify: func(d *core.DAG) { d.Tasks[0].Operator = "python" },
			want: `tasks[0].operator: unknown operator "python"`},
		{name: "missing operator", modify: func(d *core.DAG) { d.Tasks[0].Operator = "" },
			want: "tasks[0].operator: is required; allowed: bash, go, http, noop, sensor, sql"},
		{name: "missing required arg", modify: func(d *core.DAG) { delete(d.Tasks[0].Args, "function") },
			want: "tasks[0].function: is required for go tasks"},
		{name: "expanded arg counts as set", modify: func(d *core.DAG) {
			d.Tasks[1].Args = nil
			d.Tasks[1].Expand["bash_command"] = core.ExpandSource{Values: []any{"echo 1"}}
		}},
		{name: "arg of another operator", modify: func(d *core.DAG) { d.Tasks[0].Args["sql"] = "x" },
			want: "tasks[0].sql: is not a field of go tasks; allowed: function, op_kwargs"},
		{name: "arg wrong type", modify: func(d *core.DAG) { d.Tasks[1].Args["bash_command"] = 3 },
			want: "tasks[1].bash_command: must be a string"},
		{name: "headers wrong type", modify: func(d *core.DAG) { d.Tasks[2].Args["headers"] = map[string]any{"A": 1} },
			want: "tasks[2].headers: must be a mapping of strings"},
		{name: "bad template nested", modify: func(d *core.DAG) { d.Tasks[2].Args["data"] = []any{map[string]any{"q": "{{ if }}"}} },
			want: "tasks[2].data[0].q: invalid template: line 1: missing value for if"},
		{name: "template name typo", modify: func(d *core.DAG) { d.Tasks[1].Args["bash_command"] = "echo {{ .param.x }}" },
			want: `tasks[1].bash_command: unknown name .param in the template (did you mean "params"?); known here: `},
		{name: "template field of ti typo", modify: func(d *core.DAG) { d.Tasks[1].Args["bash_command"] = "echo {{ .ti.try_numbr }}" },
			want: `tasks[1].bash_command: unknown name .ti.try_numbr in the template (did you mean "try_number"?); known here: dag_id, id, map_index`},
		{name: "template field of a string", modify: func(d *core.DAG) { d.Tasks[1].Args["bash_command"] = "echo {{ .ds.year }}" },
			want: `tasks[1].bash_command: .ds is a string: it has no field "year"`},
		{name: "unencodable param", modify: func(d *core.DAG) { d.Params = map[string]any{"x": math.Inf(1)} },
			want: "params.x: value cannot be stored as JSON"},
		{name: "duplicate task", modify: func(d *core.DAG) { d.Tasks[2].TaskID = "extract" },
			want: `tasks[2].task_id: duplicate task_id "extract" (also tasks[0])`},
		{name: "unknown upstream", modify: func(d *core.DAG) { d.Tasks[2].DependsOn = []string{"lod"} },
			want: `tasks[2].depends_on[0]: unknown task "lod" (did you mean "load"?)`},
		{name: "listed twice", modify: func(d *core.DAG) { d.Tasks[2].DependsOn = []string{"load", "load"} },
			want: `tasks[2].depends_on[1]: "load" is listed twice`},
		{name: "cycle", modify: func(d *core.DAG) { d.Tasks[0].DependsOn = []string{"call"}; d.Tasks[2].DependsOn = []string{"load"} },
			want: "dependency cycle: extract -> load -> call -> extract"},
		{name: "xcom upstream not in depends_on", modify: func(d *core.DAG) { d.Tasks[1].DependsOn = nil },
			want: `tasks[1].expand.x.xcom: upstream "extract" must be listed in depends_on`},
		{name: "expand both", modify: func(d *core.DAG) {
			d.Tasks[1].Expand["x"] = core.ExpandSource{Values: []any{1}, XCom: &core.XComRef{TaskID: "extract"}}
		}, want: "tasks[1].expand.x: set either a list of values or xcom, not both"},
		{name: "expand also literal", modify: func(d *core.DAG) { d.Tasks[1].Args["cwd"] = "/"; d.Tasks[1].Expand["cwd"] = core.ExpandSource{} },
			want: `tasks[1].expand.cwd: "cwd" is also set as a plain field`},
		{name: "env name", modify: func(d *core.DAG) { d.Tasks[1].Env = map[string]string{"1X": "y"} },
			want: "tasks[1].env.1X: is not a valid environment variable name"},
		{name: "end before start", modify: func(d *core.DAG) { e := d.StartDate.Add(-time.Hour); d.EndDate = &e },
			want: "end_date: must not be before start_date"},
		{name: "empty tag", modify: func(d *core.DAG) { d.Tags = []string{""} }, want: "tags[0]: must be a non-empty string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := goodDAG()
			tc.modify(&d)
			err := Validate(&d)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("no error, want %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error = %q\nwant containing %q", err, tc.want)
			}
		})
	}
}

func TestHash(t *testing.T) {
	t.Parallel()
	a, b := goodDAG(), goodDAG()
	if Hash(&a) != Hash(&b) {
		t.Fatal("equal DAGs hash differently")
	}
	local := a.StartDate.In(time.FixedZone("X", 3600))
	b.StartDate = &local
	if Hash(&a) != Hash(&b) {
		t.Fatal("the same instant in another zone changes the hash")
	}
	b.Tasks[0].Retries = 1
	if Hash(&a) == Hash(&b) {
		t.Fatal("a changed DAG has the same hash")
	}
	if len(Hash(&a)) != 64 {
		t.Fatalf("hash %q is not hex sha256", Hash(&a))
	}
}

func TestApplyDefaults(t *testing.T) {
	t.Parallel()
	d := core.DAG{Tasks: []core.Task{{Operator: "http"}, {Operator: "bash", Queue: "q", PoolSlots: 3, RetryDelay: core.Duration(time.Second)}}}
	ApplyDefaults(&d)
	h, b := d.Tasks[0], d.Tasks[1]
	if h.RetryDelay != 0 || h.Queue != "default" || h.Pool != "default_pool" || h.PoolSlots != 1 ||
		h.PriorityWeight != 1 || h.Args["method"] != "GET" || h.Args["http_conn_id"] != "http_default" {
		t.Errorf("http task defaults: %+v", h)
	}
	if b.Queue != "q" || b.PoolSlots != 3 || b.RetryDelay.D() != time.Second || b.Args != nil {
		t.Errorf("explicit values overwritten: %+v", b)
	}
}

// retry_delay defaults to 5m where a task is written without one (its own
// field or default_args); an explicit 0s is kept: retry at once.
func TestRetryDelayZeroIsKept(t *testing.T) {
	t.Parallel()
	dags, err := Load("d.yaml", []byte(`dag_id: d
default_args: {retries: 1}
tasks:
  - {task_id: unset, operator: bash, bash_command: "true"}
  - {task_id: zero, operator: bash, bash_command: "true", retry_delay: 0s}
  - {task_id: ten, operator: bash, bash_command: "true", retry_delay: 10s}
---
dag_id: e
default_args: {retry_delay: 0s}
tasks:
  - {task_id: from_defaults, operator: bash, bash_command: "true"}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{"unset": DefaultRetryDelay, "zero": 0, "ten": 10 * time.Second, "from_defaults": 0}
	for _, d := range dags {
		for _, task := range d.Tasks {
			if got := task.RetryDelay.D(); got != want[task.TaskID] {
				t.Errorf("%s.%s: retry_delay %v, want %v", d.DagID, task.TaskID, got, want[task.TaskID])
			}
		}
	}
}
