package weir

import (
	"encoding/json"
	"maps"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/operator"
)

// TaskOption sets a task field; pass options when adding a task, or to
// DefaultArgs for every task of a DAG.
type TaskOption func(*Task)

// DependsOn makes the task run after the given upstream tasks (of the same
// DAG), subject to its TriggerRule.
func DependsOn(upstream ...*Task) TaskOption {
	return func(t *Task) {
		if t.inDefaults {
			t.problem("depends_on", "DependsOn cannot be a default arg; set it on each task")
			return
		}
		for _, up := range upstream {
			t.dependOn(up, "DependsOn")
		}
	}
}

// TriggerRule decides when the task runs given its upstreams' states
// (default AllSuccess).
func TriggerRule(r Rule) TaskOption {
	return func(t *Task) { t.spec.TriggerRule = core.TriggerRule(r) }
}

// Retries is the number of tries after the first (default 0).
func Retries(n int) TaskOption { return func(t *Task) { t.spec.Retries = n } }

// RetryDelay is the wait before a retry (default 5m; 0 retries at once).
func RetryDelay(d time.Duration) TaskOption {
	return func(t *Task) { t.spec.RetryDelay = core.Duration(d) }
}

// RetryExponentialBackoff doubles the delay on each retry, up to
// MaxRetryDelay (default 24h).
func RetryExponentialBackoff() TaskOption {
	return func(t *Task) { t.spec.RetryExponentialBackoff = true }
}

// MaxRetryDelay caps the delay of RetryExponentialBackoff.
func MaxRetryDelay(d time.Duration) TaskOption {
	return func(t *Task) { t.spec.MaxRetryDelay = core.Duration(d) }
}

// ExecutionTimeout fails a try that runs longer than d; a Go task's ctx
// ends then.
func ExecutionTimeout(d time.Duration) TaskOption {
	return func(t *Task) { t.spec.ExecutionTimeout = core.Duration(d) }
}

// Queue is the worker queue the task runs on (default "default").
func Queue(name string) TaskOption { return func(t *Task) { t.spec.Queue = name } }

// Pool is the pool whose slots the task uses (default "default_pool").
func Pool(name string) TaskOption { return func(t *Task) { t.spec.Pool = name } }

// PoolSlots is the number of pool slots one instance takes (default 1).
func PoolSlots(n int) TaskOption {
	return func(t *Task) {
		if n < 1 {
			t.problem("pool_slots", "must be a positive integer")
		}
		t.spec.PoolSlots = n
	}
}

// PriorityWeight orders queued tasks when slots are short: higher first
// (default 1).
func PriorityWeight(n int) TaskOption { return func(t *Task) { t.spec.PriorityWeight = n } }

// Env sets environment variables for the task's process (bash tasks). It
// replaces an Env given in DefaultArgs rather than merging with it.
func Env(vars map[string]string) TaskOption {
	return func(t *Task) { t.spec.Env = maps.Clone(vars) }
}

// Method is an HTTP task's method (default GET).
func Method(m string) TaskOption { return arg(operator.HTTP, "method", "Method", strings.ToUpper(m)) }

// Data is an HTTP task's request body: a string (a template) or any value,
// sent as JSON.
func Data(v any) TaskOption { return arg(operator.HTTP, "data", "Data", v) }

// Headers are an HTTP task's request headers (values are templates).
func Headers(h map[string]string) TaskOption {
	m := make(map[string]any, len(h))
	for k, v := range h {
		m[k] = v
	}
	return arg(operator.HTTP, "headers", "Headers", m)
}

// Cwd is the working directory of a bash task.
func Cwd(dir string) TaskOption { return arg(operator.Bash, "cwd", "Cwd", dir) }

// OpKwargs are named values for a Go task, rendered as templates before
// each try (so "{{ ds }}" becomes the run's date) and read with OpKwarg.
func OpKwargs(kw map[string]any) TaskOption {
	return arg(operator.Go, "op_kwargs", "OpKwargs", maps.Clone(kw))
}

// arg sets an operator field. In DefaultArgs it applies only to tasks of
// op, as in YAML; on another operator's task it is an error.
func arg(op, field, option string, v any) TaskOption {
	return func(t *Task) {
		if t.spec.Operator != op {
			if !t.inDefaults {
				t.problem(field, "%s applies to %s tasks only, not %s tasks", option, op, t.spec.Operator)
			}
			return
		}
		if t.spec.Args == nil {
			t.spec.Args = map[string]any{}
		}
		t.spec.Args[field] = v
	}
}

// Expand maps the task over a literal list: it runs once per value
// (map_index 0, 1, ...), with the value as its mapped argument name (a Go
// task reads it with MapArg; templates with {{ map_args.<name> }}).
// Several Expand options give the cross product; an empty list skips the
// task. A name equal to an operator field (such as "bash_command") replaces
// that field in each instance.
func Expand(name string, values ...any) TaskOption {
	return func(t *Task) {
		vals := append([]any{}, values...)
		for i, v := range vals {
			if _, err := json.Marshal(v); err != nil {
				t.problem("expand."+name, "value %d cannot be stored as JSON: %v", i, err)
			}
		}
		t.expand(name, core.ExpandSource{Values: vals})
	}
}

// ExpandXCom maps the task over the list (or object) an upstream task
// returned; the upstream is added to DependsOn. A mapped upstream's values
// are gathered into one list in map_index order.
func ExpandXCom(name string, upstream *Task) TaskOption {
	return ExpandXComKey(name, upstream, "")
}

// ExpandXComKey is ExpandXCom over the upstream's XCom key instead of its
// return value.
func ExpandXComKey(name string, upstream *Task, key string) TaskOption {
	return func(t *Task) {
		if upstream == nil {
			t.problem("expand."+name, "ExpandXCom needs an upstream task, got nil")
			return
		}
		if t.expand(name, core.ExpandSource{XCom: &core.XComRef{TaskID: upstream.ID(), Key: key}}) {
			t.dependOn(upstream, "ExpandXCom")
		}
	}
}

// expand records a mapped argument; it reports whether it did.
func (t *Task) expand(name string, src core.ExpandSource) bool {
	if t.inDefaults {
		t.problem("expand", "Expand options cannot be default args; set them on each task")
		return false
	}
	if t.spec.Expand == nil {
		t.spec.Expand = map[string]core.ExpandSource{}
	}
	t.spec.Expand[name] = src
	// An empty positional field (Bash(id, "", Expand("bash_command", ...)))
	// is mapped instead.
	if v, ok := t.spec.Args[name]; ok && v == "" {
		delete(t.spec.Args, name)
	}
	return true
}

// Connections declares connection ids the task reads besides its conn_id or
// http_conn_id: a task reads only the connections it declares unless the
// deployment sets [core] allow_any_connection.
func Connections(ids ...string) TaskOption {
	return func(t *Task) { t.spec.Connections = append(t.spec.Connections, ids...) }
}
