package weir

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
	"github.com/weirflow/weir/internal/operator"
)

// TaskFunc is a task written in Go. It runs inside the worker process; its
// return value (when not nil, and JSON-encodable) becomes the task's
// return_value XCom. An error or a panic fails the try, ErrSkip skips it.
// ctx ends when the try is cancelled or its ExecutionTimeout passes.
type TaskFunc func(ctx context.Context, tc *TaskContext) (any, error)

// Task is one task of a DAG, as returned by the DAG's Go, Bash, HTTP, SQL
// and Noop methods; pass it to DependsOn or ExpandXCom of later tasks.
type Task struct {
	dag     *DAG
	spec    core.Task
	fn      TaskFunc
	resumes map[string]TaskFunc // OnResume methods
	handler StreamHandler       // HandleStream's
	// batchHandler is HandleStreamBatch's.
	batchHandler StreamBatchHandler
	// callbacks are the task's Go callbacks by registered name.
	callbacks map[string]CallbackFunc
	problems  []dagfile.Problem // paths relative to the task
	// inDefaults is set while DefaultArgs options are applied.
	inDefaults bool
}

// ID returns the task_id.
func (t *Task) ID() string { return t.spec.TaskID }

func (t *Task) problem(path, format string, args ...any) {
	t.problems = append(t.problems, dagfile.Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
}

// FunctionName returns the name a Go task's function is registered under in
// the worker: "<dag_id>.<task_id>". YAML DAGs served by the same binary can
// call it as `operator: go` with `function: <name>`.
func FunctionName(dagID, taskID string) string { return dagID + "." + taskID }

// Go adds a task that runs fn in the worker (operator "go").
func (d *DAG) Go(id string, fn TaskFunc, opts ...TaskOption) *Task {
	t := d.add(id, operator.Go, map[string]any{"function": FunctionName(d.spec.DagID, id)}, opts)
	t.fn = fn
	if fn == nil {
		t.problem("function", "a Go task needs a function, got nil")
	}
	return t
}

// Bash adds a task that runs command with bash (operator "bash"); the exit
// code decides success and exit code 99 skips. The command is a template
// ({{ ds }}, {{ ti.xcom_pull(task_ids="task") }}, ...). To map the command itself, pass
// "" and Expand("bash_command", ...).
func (d *DAG) Bash(id, command string, opts ...TaskOption) *Task {
	return d.add(id, operator.Bash, map[string]any{"bash_command": command}, opts)
}

// HTTP adds a task that calls endpoint (a path or URL, a template) on the
// connection connID ("" = "http_default"); the response body is its
// return value. Method, Data and Headers set the rest of the request.
func (d *DAG) HTTP(id, connID, endpoint string, opts ...TaskOption) *Task {
	args := map[string]any{"endpoint": endpoint}
	if connID != "" {
		args["http_conn_id"] = connID
	}
	return d.add(id, operator.HTTP, args, opts)
}

// SQL adds a task that runs sql (a template) on the connection connID
// (PostgreSQL or SQLite); a SELECT's rows are its return value.
func (d *DAG) SQL(id, connID, sql string, opts ...TaskOption) *Task {
	return d.add(id, operator.SQL, map[string]any{"conn_id": connID, "sql": sql}, opts)
}

// Noop adds a task that does nothing (Airflow's EmptyOperator), useful to
// join or fan out branches.
func (d *DAG) Noop(id string, opts ...TaskOption) *Task {
	return d.add(id, operator.Noop, nil, opts)
}

func (d *DAG) add(id, op string, args map[string]any, opts []TaskOption) *Task {
	// Defaults whose zero means something are set here, before the
	// options, so RetryDelay(0) retries at once.
	t := &Task{dag: d, spec: core.Task{TaskID: id, Operator: op, Args: args, RetryDelay: core.Duration(dagfile.DefaultRetryDelay)}}
	t.inDefaults = true
	for _, o := range d.defaults {
		o(t)
	}
	t.inDefaults = false
	for _, o := range opts {
		o(t)
	}
	d.tasks = append(d.tasks, t)
	return t
}

// Then makes down run after t and returns down, so that chains read in
// order: extract.Then(transform).Then(load).
func (t *Task) Then(down *Task) *Task {
	if down == nil {
		t.problem("then", "Then needs a task, got nil")
		return down
	}
	down.dependOn(t, "then")
	return down
}

// dependOn adds up to the task's depends_on (once); why names the option
// for errors.
func (t *Task) dependOn(up *Task, why string) {
	switch {
	case up == nil:
		t.problem("depends_on", "%s: upstream task is nil", why)
	case up.dag != t.dag:
		t.problem("depends_on", "%s: task %q belongs to dag %q, not %q", why, up.ID(), up.dag.ID(), t.dag.ID())
	case !slices.Contains(t.spec.DependsOn, up.ID()):
		t.spec.DependsOn = append(t.spec.DependsOn, up.ID())
	}
}

// definition returns a copy of the task's definition, safe to hand out.
func (t *Task) definition() core.Task {
	s := t.spec
	s.DependsOn = slices.Clone(s.DependsOn)
	s.Env = maps.Clone(s.Env)
	s.Args = maps.Clone(s.Args)
	s.Expand = maps.Clone(s.Expand)
	return s
}
