package weir

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
)

func nop(context.Context, *TaskContext) (any, error) { return nil, nil }

// fileLoc is what SDK DAGs are named after in this test binary.
var fileLoc = NewDAG("x").spec.FileLoc

// A Go DAG says its template syntax as a YAML file does, and its
// templates are checked in it.
func TestTemplateSyntaxOption(t *testing.T) {
	t.Parallel()
	d := NewDAG("jinja", TemplateSyntax("jinja"))
	d.Bash("greet", "echo {{ params.who | shquote }} on {{ macros.ds_add(ds, 1) }}")
	got, err := d.compile()
	if err != nil {
		t.Fatal(err)
	}
	if got.TemplateSyntax != core.TemplateJinja {
		t.Errorf("template_syntax = %q, want jinja", got.TemplateSyntax)
	}
	d = NewDAG("go", TemplateSyntax("go"))
	d.Bash("greet", "echo {{ params.who }}")
	if _, err := d.compile(); err == nil || !strings.Contains(err.Error(), "tasks.greet.bash_command") {
		t.Errorf("compile of a Jinja template in a Go-syntax DAG = %v, want an error naming tasks.greet.bash_command", err)
	}
	d = NewDAG("typo")
	d.Bash("greet", "echo {{ parms.who }}")
	if _, err := d.compile(); err == nil || !strings.Contains(err.Error(), `did you mean "params"`) {
		t.Errorf("compile of a Jinja typo = %v, want did you mean params", err)
	}
}

func TestCompileBuildsTheDefinition(t *testing.T) {
	t.Parallel()
	start := time.Date(2024, 1, 1, 6, 0, 0, 0, time.UTC)
	end := start.AddDate(1, 0, 0)
	d := NewDAG("etl", Description("Load orders."), Schedule("@daily"), StartDate(start), EndDate(end),
		Catchup(true), MaxActiveRuns(2), MaxActiveTasks(4), Params(map[string]any{"region": "eu"}),
		Tags("a", "b"), Timezone("Europe/Amsterdam"), Timetable("CronTriggerTimetable"),
		TimetableInterval(24*time.Hour), RunImmediately(false),
		DefaultArgs(Retries(2), RetryDelay(30*time.Second), Method("post"), Env(map[string]string{"A": "1"})))
	extract := d.Go("extract", nop, RetryExponentialBackoff(), MaxRetryDelay(time.Minute), ExecutionTimeout(time.Hour),
		Queue("q"), Pool("p"), PoolSlots(2), PriorityWeight(7), OpKwargs(map[string]any{"day": "{{ .ds }}"}),
		Connections("object_store"))
	call := d.HTTP("call", "", "/orders", Data(map[string]any{"n": 1}), Headers(map[string]string{"X": "y"}),
		Env(map[string]string{"B": "2"}), DependsOn(extract))
	d.SQL("load", "warehouse", "select 1", TriggerRule(AllDone), Retries(0),
		Expand("region", "eu", "us"), ExpandXComKey("file", call, "files"))
	d.Bash("echo", "", Cwd("/tmp"), Expand("bash_command", "echo 1", "echo 2"))
	extract.Then(d.Noop("after"))

	got, err := d.compile()
	if err != nil {
		t.Fatal(err)
	}
	tpl := core.Task{RetryDelay: core.Duration(30 * time.Second), Retries: 2, Queue: "default",
		Pool: "default_pool", PoolSlots: 1, PriorityWeight: 1, Env: map[string]string{"A": "1"}}
	task := func(id, op string, f func(*core.Task)) core.Task {
		c := tpl
		c.TaskID, c.Operator = id, op
		f(&c)
		return c
	}
	want := core.DAG{DagID: "etl", Description: "Load orders.", Schedule: "@daily", Timetable: "CronTriggerTimetable",
		TimetableInterval: core.Duration(24 * time.Hour), RunImmediately: &core.RunImmediately{Never: true}, StartDate: &start, EndDate: &end,
		Catchup: true, MaxActiveRuns: 2, MaxActiveTasks: 4, Params: map[string]any{"region": "eu"},
		Tags: []string{"a", "b"}, Timezone: "Europe/Amsterdam", FileLoc: fileLoc,
		TemplateSyntax: core.TemplateGo, // detected from op_kwargs' {{ .ds }}
		Tasks: []core.Task{
			task("extract", "go", func(c *core.Task) {
				c.RetryExponentialBackoff, c.MaxRetryDelay = true, core.Duration(time.Minute)
				c.ExecutionTimeout, c.Queue, c.Pool = core.Duration(time.Hour), "q", "p"
				c.PoolSlots, c.PriorityWeight = 2, 7
				c.Args = map[string]any{"function": "etl.extract", "op_kwargs": map[string]any{"day": "{{ .ds }}"}}
				c.Connections = []string{"object_store"}
			}),
			task("call", "http", func(c *core.Task) {
				c.DependsOn, c.Env = []string{"extract"}, map[string]string{"B": "2"}
				c.Args = map[string]any{"endpoint": "/orders", "method": "POST", "http_conn_id": "http_default",
					"data": map[string]any{"n": 1}, "headers": map[string]any{"X": "y"}}
			}),
			task("load", "sql", func(c *core.Task) {
				c.TriggerRule, c.Retries, c.DependsOn = core.AllDone, 0, []string{"call"}
				c.Args = map[string]any{"conn_id": "warehouse", "sql": "select 1"}
				c.Expand = map[string]core.ExpandSource{"region": {Values: []any{"eu", "us"}},
					"file": {XCom: &core.XComRef{TaskID: "call", Key: "files"}}}
			}),
			task("echo", "bash", func(c *core.Task) {
				c.Args = map[string]any{"cwd": "/tmp"}
				c.Expand = map[string]core.ExpandSource{"bash_command": {Values: []any{"echo 1", "echo 2"}}}
			}),
			task("after", "noop", func(c *core.Task) { c.DependsOn = []string{"extract"} }),
		}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("compiled DAG (-want +got):\n%s", diff)
	}
}

// TestDefaultsMatchYAML checks that a Go DAG and the same DAG written as a
// YAML file are the same definition: defaults, default_args, implied
// dependencies.
func TestDefaultsMatchYAML(t *testing.T) {
	t.Parallel()
	yaml := `
dag_id: same
default_args: {retries: 3, method: PUT}
tasks:
  - {task_id: make, operator: bash, bash_command: echo}
  - {task_id: call, operator: http, endpoint: /x, depends_on: make}
  - task_id: each
    operator: go
    function: same.each
    expand: {n: {xcom: make}, m: [1, 2]}
`
	dags, err := dagfile.Load("same.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	want := dags[0]
	want.FileLoc = fileLoc

	d := NewDAG("same", DefaultArgs(Retries(3), Method("put")))
	mk := d.Bash("make", "echo")
	d.HTTP("call", "", "/x", DependsOn(mk))
	d.Go("each", nop, ExpandXCom("n", mk), Expand("m", 1, 2))
	assertSameAsYAML(t, want, d)
}

// assertSameAsYAML compiles d and checks that it is the DAG a YAML file
// defines (yaml, loaded): the same JSON and hash, so the processor sees one
// version.
func assertSameAsYAML(t *testing.T, yaml core.DAG, d *DAG) {
	t.Helper()
	got, err := d.compile()
	if err != nil {
		t.Fatal(err)
	}
	// What the store keeps, and what the DAG processor compares, is JSON.
	if diff := cmp.Diff(indentJSON(t, yaml), indentJSON(t, got)); diff != "" {
		t.Errorf("Go DAG differs from the YAML DAG (-yaml +go):\n%s", diff)
	}
	if dagfile.Hash(&yaml) != dagfile.Hash(&got) {
		t.Error("Go DAG and YAML DAG hash differently: the processor would see two versions")
	}
}

func TestValidationErrors(t *testing.T) {
	t.Parallel()
	p := fileLoc + `: dag "d": `
	cases := []struct {
		name  string
		build func(d *DAG)
		want  []string
	}{
		{"cycle", func(d *DAG) {
			a, b := d.Noop("a"), d.Noop("b")
			a.Then(b).Then(a)
		}, []string{p + "tasks.a.depends_on: dependency cycle: a -> b -> a"}},
		{"duplicate task id", func(d *DAG) { d.Noop("a"); d.Noop("a") },
			[]string{p + `tasks.a.task_id: duplicate task_id "a" (also tasks[0])`}},
		{"unknown trigger rule", func(d *DAG) { d.Noop("a", TriggerRule("all_sucess")) },
			[]string{p + `tasks.a.trigger_rule: unknown trigger rule "all_sucess"; allowed: all_success`}},
		{"bad schedule", func(d *DAG) { Schedule("@dailly")(d); d.Noop("a") },
			[]string{p + `schedule: unknown preset "@dailly"`}},
		{"schedule without start date", func(d *DAG) { Schedule("@daily")(d); d.Noop("a") },
			[]string{p + "start_date: is required when a schedule is set"}},
		{"no tasks", func(*DAG) {}, []string{p + "tasks: at least one task is required"}},
		{"nil function", func(d *DAG) { d.Go("g", nil) },
			[]string{p + "tasks.g.function: a Go task needs a function, got nil"}},
		{"bad template", func(d *DAG) { d.Bash("b", "echo {{ .ds ") },
			[]string{p + "tasks.b.bash_command: invalid template"}},
		{"option of another operator", func(d *DAG) { d.Bash("b", "echo", Method("POST")) },
			[]string{p + "tasks.b.method: Method applies to http tasks only, not bash tasks"}},
		{"depends on another dag's task", func(d *DAG) {
			other := NewDAG("other").Noop("x")
			d.Noop("a", DependsOn(other))
		}, []string{p + `tasks.a.depends_on: DependsOn: task "x" belongs to dag "other", not "d"`}},
		{"depends_on in default args", func(d *DAG) {
			DefaultArgs(DependsOn())(d)
			d.Noop("a")
		}, []string{p + "tasks.a.depends_on: DependsOn cannot be a default arg"}},
		{"bad counts", func(d *DAG) {
			MaxActiveRuns(0)(d)
			d.Noop("a", PoolSlots(0), Retries(-1))
		}, []string{p + "max_active_runs: must be a positive integer", p + "tasks.a.pool_slots: must be a positive integer",
			p + "tasks.a.retries: must be a non-negative integer"}},
		{"bad ids and timezone", func(d *DAG) { Timezone("Mars/Olympus")(d); d.Noop("a b") },
			[]string{p + `timezone: unknown timezone "Mars/Olympus"`,
				p + `tasks.a b.task_id: "a b" may contain only letters, digits, dashes, dots and underscores`}},
		{"a timetable without a cron schedule", func(d *DAG) {
			Schedule("1h")(d)
			StartDate(time.Now())(d)
			Timetable("CronTriggerTimetable")(d)
			d.Noop("a")
		},
			[]string{p + `timetable: CronTriggerTimetable needs a cron schedule (a preset such as "@daily" or a 5-field cron expression), not "1h"`}},
		{"timetable arguments without CronTriggerTimetable", func(d *DAG) {
			Schedule("@daily")(d)
			StartDate(time.Now())(d)
			TimetableInterval(time.Hour)(d)
			d.Noop("a")
		},
			[]string{p + `timetable: interval and run_immediately are arguments of CronTriggerTimetable: name it as the timetable's type`}},
		{"run immediately within nothing", func(d *DAG) {
			Schedule("@daily")(d)
			StartDate(time.Now())(d)
			Timetable("CronTriggerTimetable")(d)
			RunImmediatelyWithin(0)(d)
			d.Noop("a")
		},
			[]string{p + `timetable.run_immediately: RunImmediatelyWithin(0s): must be a positive duration`}},
		{"unencodable expand value", func(d *DAG) { d.Noop("a", Expand("x", func() {})) },
			[]string{p + "tasks.a.expand.x: value 0 cannot be stored as JSON"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := NewDAG("d")
			c.build(d)
			err := d.Validate()
			if err == nil {
				t.Fatal("Validate accepted an invalid DAG")
			}
			lines := strings.Split(err.Error(), "\n")
			for _, w := range c.want {
				if !containsPrefix(lines, w) {
					t.Errorf("no problem starting with\n  %s\nin\n  %s", w, strings.Join(lines, "\n  "))
				}
			}
			if len(lines) != len(c.want) {
				t.Errorf("got %d problems, want %d:\n%s", len(lines), len(c.want), err)
			}
		})
	}
}

func TestValidDAGPasses(t *testing.T) {
	t.Parallel()
	d := NewDAG("ok", Schedule("*/5 * * * *"), StartDate(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)))
	d.Bash("a", "echo {{ .ds }}").Then(d.Noop("b", TriggerRule(NoneFailedMinOneSuccess)))
	if err := d.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
}

func indentJSON(t *testing.T, v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func containsPrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// weir.PausedUponCreation sets the DAG's is_paused_upon_creation; without
// it the deployment's default decides.
func TestPausedUponCreation(t *testing.T) {
	t.Parallel()
	for _, want := range []bool{true, false} {
		d := NewDAG("p", PausedUponCreation(want))
		d.Noop("a")
		spec, err := d.compile()
		if err != nil || spec.IsPausedUponCreation == nil || *spec.IsPausedUponCreation != want {
			t.Errorf("PausedUponCreation(%v): %v, %v", want, spec.IsPausedUponCreation, err)
		}
	}
	d := NewDAG("q")
	d.Noop("a")
	if spec, err := d.compile(); err != nil || spec.IsPausedUponCreation != nil {
		t.Errorf("without the option: %v, %v; want unset", spec.IsPausedUponCreation, err)
	}
}

// RetryDelay defaults to 5m; RetryDelay(0), on a task or in DefaultArgs,
// retries at once (it is not taken for "unset").
func TestRetryDelayZeroIsKept(t *testing.T) {
	t.Parallel()
	d := NewDAG("d")
	d.Bash("unset", "true", Retries(1))
	d.Bash("zero", "true", Retries(1), RetryDelay(0))
	z := NewDAG("z", DefaultArgs(RetryDelay(0)))
	z.Bash("from_defaults", "true", Retries(1))
	want := map[string]time.Duration{"unset": 5 * time.Minute, "zero": 0, "from_defaults": 0}
	for _, dag := range []*DAG{d, z} {
		spec, err := dag.compile()
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range spec.Tasks {
			if got := task.RetryDelay.D(); got != want[task.TaskID] {
				t.Errorf("%s: retry delay %v, want %v", task.TaskID, got, want[task.TaskID])
			}
		}
	}
}
