package dagfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/schedule"
	"github.com/weirflow/weir/internal/template"
)

// MaxIDLength is the longest dag_id or task_id, as in Airflow.
const MaxIDLength = 250

var (
	idRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]+$`) })
	identRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
)

// Validate checks a DAG built in Go (the SDK) or loaded from a file: ids,
// operators and their fields, templates, dependencies (unknown upstreams,
// cycles), trigger rules, retries, schedule, dates and timezone. It returns
// an *Error listing every problem, or nil.
func Validate(d *core.DAG) error { return ValidateWith(d, Options{}) }

// Options tune loading and validation.
type Options struct {
	// CheckTrigger validates a trigger a task waits on (a sensor's, or a
	// task's start trigger) against the program's trigger types; nil
	// checks only its shape. trigger.Registry.Check fits.
	CheckTrigger func(core.TriggerSpec) error
	// CheckWatcher validates an asset watcher's trigger against the
	// program's trigger types (trigger.Registry.CheckWatcher fits); nil
	// checks only its shape.
	CheckWatcher func(core.TriggerSpec) error
	// StreamTypes are the trigger types that produce a stream
	// (trigger.Registry.StreamTypes): a sensor on one of them is a
	// producer a task may iterate over. nil accepts any sensor.
	StreamTypes []string
}

// ValidateWith is Validate with options.
func ValidateWith(d *core.DAG, o Options) error {
	ps := validate(d, o)
	for i := range ps {
		ps[i].File = d.FileLoc
		ps[i].Path = strings.TrimSuffix(fmt.Sprintf("dag %q: %s", d.DagID, ps[i].Path), ": ")
	}
	return newError(ps)
}

// problems collects validation problems by field path.
type problems []Problem

func (ps *problems) add(path, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func validate(d *core.DAG, o Options) []Problem {
	var ps problems
	checkID(&ps, "dag_id", d.DagID)
	loc := time.UTC
	if d.Timezone != "" {
		l, err := time.LoadLocation(d.Timezone)
		if err != nil || d.Timezone == "Local" {
			ps.add("timezone", "unknown timezone %q; use an IANA name such as \"UTC\" or \"Europe/Amsterdam\"", d.Timezone)
		} else {
			loc = l
		}
	}
	tt, err := schedule.Parse(d.Schedule, loc)
	if err != nil {
		ps.add("schedule", "%v", err)
	} else if d.Timetable != "" || d.TimetableInterval != 0 || d.RunImmediately != nil {
		if _, err := schedule.Of(d); err != nil {
			ps.add("timetable", "%v", err)
		}
	}
	if _, none := tt.(schedule.None); err == nil && !none && d.StartDate == nil {
		ps.add("start_date", "is required when a schedule is set (a date such as 2024-01-01)")
	}
	if d.StartDate != nil && d.EndDate != nil && d.EndDate.Before(*d.StartDate) {
		ps.add("end_date", "must not be before start_date")
	}
	if d.MaxActiveRuns < 0 {
		ps.add("max_active_runs", "must be a positive integer")
	}
	if d.MaxActiveTasks < 0 {
		ps.add("max_active_tasks", "must be a positive integer")
	}
	for i, tag := range d.Tags {
		if tag == "" || len(tag) > 100 {
			ps.add(fmt.Sprintf("tags[%d]", i), "must be a non-empty string of at most 100 characters")
		}
	}
	for _, k := range sortedKeys(d.Params) {
		if k == "" {
			ps.add("params", "parameter names must not be empty")
		}
		if _, err := json.Marshal(d.Params[k]); err != nil {
			ps.add("params."+k, "value cannot be stored as JSON: %v", err)
		}
	}
	validateAssets(&ps, d, o)
	if len(d.Tasks) == 0 {
		ps.add("tasks", "at least one task is required")
	}
	syntax := validateTemplateSyntax(&ps, d)
	first := map[string]int{}
	for i := range d.Tasks {
		t := &d.Tasks[i]
		path := fmt.Sprintf("tasks[%d]", i)
		if j, dup := first[t.TaskID]; dup && t.TaskID != "" {
			ps.add(path+".task_id", "duplicate task_id %q (also tasks[%d])", t.TaskID, j)
		} else {
			first[t.TaskID] = i
		}
		validateTask(&ps, path, t, syntax)
		checkTriggers(&ps, path, t, o.CheckTrigger)
	}
	validateCallbacks(&ps, d, syntax)
	depsOK := validateDeps(&ps, d)
	validateIterate(&ps, d, o.StreamTypes)
	validateHandlers(&ps, d, o.StreamTypes)
	if depsOK {
		if cyc := findCycle(d); cyc != nil {
			i := slices.IndexFunc(d.Tasks, func(t core.Task) bool { return t.TaskID == cyc[0] })
			ps.add(fmt.Sprintf("tasks[%d].depends_on", i), "dependency cycle: %s", strings.Join(cyc, " -> "))
		}
	}
	return ps
}

func checkID(ps *problems, path, id string) {
	switch {
	case id == "":
		ps.add(path, "is required")
	case len(id) > MaxIDLength:
		ps.add(path, "must be at most %d characters (it has %d)", MaxIDLength, len(id))
	case !idRe().MatchString(id):
		ps.add(path, "%q may contain only letters, digits, dashes, dots and underscores", id)
	}
}

func validateTask(ps *problems, path string, t *core.Task, syntax core.TemplateSyntax) {
	checkID(ps, path+".task_id", t.TaskID)
	if !t.TriggerRule.Valid() {
		ps.add(path+".trigger_rule", "unknown trigger rule %q; allowed: %s", t.TriggerRule, triggerRuleList())
	}
	if t.Retries < 0 {
		ps.add(path+".retries", "must be a non-negative integer")
	}
	for _, dur := range []struct {
		name string
		v    core.Duration
	}{{"retry_delay", t.RetryDelay}, {"max_retry_delay", t.MaxRetryDelay}, {"execution_timeout", t.ExecutionTimeout}} {
		if dur.v < 0 {
			ps.add(path+"."+dur.name, "must not be negative")
		}
	}
	if t.PoolSlots < 0 {
		ps.add(path+".pool_slots", "must be a positive integer")
	}
	for k := range t.Env {
		if !identRe().MatchString(k) {
			ps.add(path+".env."+k, "is not a valid environment variable name (letters, digits and underscores, not starting with a digit)")
		}
	}
	for i, id := range t.Connections {
		if id == "" || strings.Contains(id, "{{") {
			ps.add(fmt.Sprintf("%s.connections[%d]", path, i), "must be a literal connection id (%q is not)", id)
		}
	}
	validateExpand(ps, path, t)
	if t.Operator == "" {
		ps.add(path+".operator", "is required; allowed: %s", strings.Join(operatorNames(), ", "))
		return
	}
	if _, ok := operators[t.Operator]; !ok {
		ps.add(path+".operator", "unknown operator %q%s; allowed: %s", t.Operator,
			didYouMean(t.Operator, operatorNames()), strings.Join(operatorNames(), ", "))
		return
	}
	if t.Operator == "sensor" {
		validateSensor(ps, path, t)
		checkStartTrigger(ps, syntax, path+".trigger", t)
		return
	}
	checkStartTrigger(ps, syntax, path+".start_trigger", t)
	validateArgs(ps, path, t, syntax)
}

// startTriggerNames is the context a start trigger's kwargs are rendered
// over (scheduler.startFromTrigger): the run's, before any worker step.
var startTriggerNames = template.Context(&core.DagRun{}, &core.TaskInstance{}, nil)

// checkStartTrigger checks the templates of t's start trigger kwargs
// against startTriggerNames: a variable or the previous successful run,
// which a worker reads, is not there.
func checkStartTrigger(ps *problems, syntax core.TemplateSyntax, path string, t *core.Task) {
	var kwargs map[string]any
	if t.StartTrigger == nil || json.Unmarshal(t.StartTrigger.Trigger.Kwargs, &kwargs) != nil {
		return
	}
	checkTemplatesIn(ps, syntax, path, kwargs, startTriggerNames,
		" (a deferrable sensor's trigger kwargs are rendered as the task is deferred, before any worker step: "+
			"variables and prev_*_success are read on a worker; use mode: poke, or a task that passes them on)")
}

func validateArgs(ps *problems, path string, t *core.Task, syntax core.TemplateSyntax) {
	for _, spec := range operators[t.Operator] {
		_, mapped := t.Expand[spec.name]
		v, set := t.Args[spec.name]
		if spec.required && !mapped && (!set || v == "") {
			ps.add(path+"."+spec.name, "is required for %s tasks", t.Operator)
		}
	}
	for _, name := range sortedKeys(t.Args) {
		v := t.Args[name]
		p := path + "." + name
		spec, ok := argSpecOf(t.Operator, name)
		if !ok {
			ps.add(p, "is not a field of %s tasks%s; allowed: %s", t.Operator, didYouMean(name, argNames(t.Operator)),
				orNone(argNames(t.Operator)))
			continue
		}
		if _, err := json.Marshal(v); err != nil {
			ps.add(p, "value cannot be stored as JSON: %v", err)
			continue
		}
		if !argTypeOK(spec.kind, v) {
			ps.add(p, "must be %s", kindName(spec.kind))
			continue
		}
		checkTemplates(ps, syntax, p, v)
	}
	if m, ok := t.Args["method"].(string); ok && !slices.Contains(httpMethods, m) {
		ps.add(path+".method", "unknown HTTP method %q; allowed: %s", m, strings.Join(httpMethods, ", "))
	}
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func argTypeOK(k argKind, v any) bool {
	switch k {
	case argString:
		_, ok := v.(string)
		return ok
	case argStringMap:
		switch m := v.(type) {
		case map[string]string:
			return true
		case map[string]any:
			for _, e := range m {
				if _, ok := e.(string); !ok {
					return false
				}
			}
			return true
		}
		return false
	case argMap:
		_, ok := v.(map[string]any)
		return ok
	case argBool:
		_, ok := v.(bool)
		return ok
	default: // argAny
		return true
	}
}

func kindName(k argKind) string {
	return [...]string{"a string", "a mapping of strings", "a mapping", "any value", "true or false"}[k]
}

// checkTemplates reports malformed templates in v (strings, nested in maps
// and lists, in syntax) and names a task's context does not have, at load
// time rather than at run time.
func checkTemplates(ps *problems, syntax core.TemplateSyntax, path string, v any) {
	checkTemplatesIn(ps, syntax, path, v, nil, "")
}

// checkTemplatesIn is checkTemplates against the context names
// (template.Check's); hint, when set, follows what an unknown name's
// problem says.
func checkTemplatesIn(ps *problems, syntax core.TemplateSyntax, path string, v any, names map[string]any, hint string) {
	switch x := v.(type) {
	case string:
		err := template.Check(syntax, path, x, names)
		var unknown *template.UnknownNameError
		switch {
		case errors.As(err, &unknown) && unknown.Parent == "":
			ps.add(path, "unknown name %s in the template%s; known here: %s%s", unknown.Name,
				didYouMean(unknown.Last(), unknown.Known), strings.Join(unknown.Known, ", "), hint)
		case err != nil:
			ps.add(path, "%s", strings.TrimPrefix(err.Error(), path+": "))
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			checkTemplatesIn(ps, syntax, path+"."+k, x[k], names, hint)
		}
	case map[string]string:
		for _, k := range sortedKeys(x) {
			checkTemplatesIn(ps, syntax, path+"."+k, x[k], names, hint)
		}
	case []any:
		for i, e := range x {
			checkTemplatesIn(ps, syntax, fmt.Sprintf("%s[%d]", path, i), e, names, hint)
		}
	}
}

func validateExpand(ps *problems, path string, t *core.Task) {
	for _, name := range sortedKeys(t.Expand) {
		src := t.Expand[name]
		p := path + ".expand." + name
		if !identRe().MatchString(name) {
			ps.add(p, "expand argument names must be identifiers (letters, digits, underscores)")
		}
		if _, dup := t.Args[name]; dup {
			ps.add(p, "%q is also set as a plain field; set it in one place", name)
		}
		if src.XCom != nil && src.Values != nil {
			ps.add(p, "set either a list of values or xcom, not both")
		}
		if src.XCom != nil {
			switch {
			case src.XCom.TaskID == "":
				ps.add(p+".xcom", "task_id is required")
			case !slices.Contains(t.DependsOn, src.XCom.TaskID):
				ps.add(p+".xcom", "upstream %q must be listed in depends_on", src.XCom.TaskID)
			}
		}
	}
}

// validateDeps checks depends_on; it reports whether the graph is sound
// enough to look for cycles.
func validateDeps(ps *problems, d *core.DAG) bool {
	ids := make([]string, len(d.Tasks))
	for i, t := range d.Tasks {
		ids[i] = t.TaskID
	}
	ok := true
	for i, t := range d.Tasks {
		for j, up := range t.DependsOn {
			p := fmt.Sprintf("tasks[%d].depends_on[%d]", i, j)
			switch {
			case up == t.TaskID:
				ps.add(p, "task %q cannot depend on itself", up)
				ok = false
			case !slices.Contains(ids, up):
				ps.add(p, "unknown task %q%s", up, didYouMean(up, ids))
				ok = false
			case slices.Index(t.DependsOn, up) < j:
				ps.add(p, "%q is listed twice", up)
			}
		}
	}
	return ok
}

// findCycle returns a dependency cycle as task ids in run order (each task
// is upstream of the next; the first is repeated at the end), or nil.
func findCycle(d *core.DAG) []string {
	const (
		unvisited = iota
		onStack
		done
	)
	state := make(map[string]int, len(d.Tasks))
	// Upstreams by task id, built once: looking each task up in the list
	// made the walk quadratic (seconds of CPU for a 10,000-task DAG).
	deps := make(map[string][]string, len(d.Tasks))
	for i := range d.Tasks {
		deps[d.Tasks[i].TaskID] = d.Tasks[i].DependsOn
	}
	var stack []string
	var visit func(id string) []string
	visit = func(id string) []string {
		state[id] = onStack
		stack = append(stack, id)
		for _, up := range deps[id] {
			switch state[up] {
			case onStack:
				i := slices.Index(stack, up)
				cyc := append(slices.Clone(stack[i:]), up)
				slices.Reverse(cyc)
				return cyc
			case unvisited:
				if c := visit(up); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[id] = done
		return nil
	}
	for _, t := range d.Tasks {
		if state[t.TaskID] == unvisited {
			if c := visit(t.TaskID); c != nil {
				return c
			}
		}
	}
	return nil
}

func triggerRuleList() string {
	names := make([]string, len(core.AllTriggerRules))
	for i, r := range core.AllTriggerRules {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
