package dagfile

import (
	"slices"
	"sort"

	"github.com/weirflow/weir/internal/core"
)

// dagFields are the top-level fields of a DAG document.
var dagFields = []string{
	"dag_id", "description", "schedule", "timetable", "start_date", "end_date", "catchup", "max_active_runs",
	"max_active_tasks", "params", "default_args", "tags", "timezone", "tasks", "assets", "asset_runs",
	"on_success", "on_failure", "template_syntax", "is_paused_upon_creation",
}

// taskFields are the fields every task accepts, whatever its operator.
var taskFields = []string{
	"task_id", "operator", "depends_on", "trigger_rule", "retries", "retry_delay",
	"retry_exponential_backoff", "max_retry_delay", "execution_timeout", "queue", "pool",
	"pool_slots", "priority_weight", "env", "expand", "inlets", "outlets", "connections",
	"iterate", "stream", "on_execute", "on_success", "on_failure", "on_retry", "on_skipped",
}

// notDefaultable are task fields that default_args may not set.
var notDefaultable = []string{"task_id", "depends_on", "expand", "inlets", "outlets", "iterate", "stream",
	core.ArgHandleCommand, core.ArgHandleFunction}

// argKind is the type an operator field takes.
type argKind int

const (
	argString    argKind = iota // a string (a template)
	argStringMap                // a mapping of strings
	argMap                      // a mapping of any values
	argAny                      // any value
	argBool                     // true or false
)

// argSpec describes one operator field, named as Airflow's operator names it.
type argSpec struct {
	name     string
	kind     argKind
	required bool
}

// operators lists the operators and the fields each takes.
var operators = map[string][]argSpec{
	"bash": {{name: "bash_command", required: true}, {name: "cwd"}, {name: "do_xcom_push", kind: argBool}},
	"http": {{name: "http_conn_id"}, {name: "endpoint"}, {name: "method"},
		{name: "data", kind: argAny}, {name: "headers", kind: argStringMap}},
	"sql":  {{name: "conn_id", required: true}, {name: "sql", required: true}},
	"go":   {{name: "function", required: true}, {name: "op_kwargs", kind: argMap}},
	"noop": {},
	"sensor": {{name: "trigger", kind: argMap, required: true}, {name: "mode"}, {name: "poke_interval"},
		{name: "timeout"}, {name: core.ArgSoftFail, kind: argBool}, {name: core.ArgHandleCommand}, {name: core.ArgHandleFunction}},
}

// httpMethods are the methods the http operator accepts.
var httpMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}

// operatorNames returns the operator names, sorted.
func operatorNames() []string {
	names := make([]string, 0, len(operators))
	for k := range operators {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// argSpecOf returns the spec of field name for operator op.
func argSpecOf(op, name string) (argSpec, bool) {
	for _, a := range operators[op] {
		if a.name == name {
			return a, true
		}
	}
	return argSpec{}, false
}

// argNames returns the field names of operator op.
func argNames(op string) []string {
	var out []string
	for _, a := range operators[op] {
		out = append(out, a.name)
	}
	return out
}

// allArgNames returns every operator field name, sorted and unique.
func allArgNames() []string {
	var out []string
	for _, op := range operatorNames() {
		for _, a := range operators[op] {
			if !slices.Contains(out, a.name) {
				out = append(out, a.name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// defaultArgFields are the fields default_args accepts.
func defaultArgFields() []string {
	var out []string
	for _, f := range taskFields {
		if !slices.Contains(notDefaultable, f) {
			out = append(out, f)
		}
	}
	for _, a := range allArgNames() {
		if !slices.Contains(notDefaultable, a) {
			out = append(out, a)
		}
	}
	return out
}
