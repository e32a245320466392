package dagfile

import (
	"slices"
	"strings"

	"github.com/weirflow/weir/internal/core"
)

// entry is one task field as written on the task or inherited from
// default_args.
type entry struct {
	name        string
	key, val    *node
	f           field
	fromDefault bool
}

// task decodes one task; id is its key in the mapping form ("" in a list).
func (d *decoder) task(n *node, f field, id string, defaults *node) core.Task {
	// A default whose zero means something is set before the fields, so
	// an explicit `retry_delay: 0s` retries at once.
	t := core.Task{TaskID: id, RetryDelay: core.Duration(DefaultRetryDelay)}
	d.at(f, n)
	if n.kind != kMap {
		d.fail(n, f, "a task must be a mapping of fields (task_id, operator, ...), not %s", describe(n))
		return t
	}
	entries := taskEntries(n, f, defaults)
	for _, e := range entries {
		if e.name == "operator" {
			t.Operator, _ = d.str(e.val, e.f)
		}
	}
	if id == "" && n.get("task_id") == nil {
		d.fail(n, f.key("task_id"), "is required")
	}
	for _, e := range entries {
		d.taskField(&t, e)
	}
	// An expand over an upstream's XCom implies the dependency.
	for _, name := range sortedKeys(t.Expand) {
		if x := t.Expand[name].XCom; x != nil && x.TaskID != "" && !slices.Contains(t.DependsOn, x.TaskID) {
			// Problems with the implied dependency point at the xcom entry.
			dep := f.key("depends_on").idx(len(t.DependsOn))
			ref := f.key("expand").key(name).key("xcom")
			d.locs[dep.path] = fieldLoc{pos: d.locs[ref.path].pos, disp: ref.disp}
			t.DependsOn = append(t.DependsOn, x.TaskID)
		}
	}
	return t
}

// taskEntries lists the task's own fields followed by the default_args
// fields it does not set itself.
func taskEntries(n *node, f field, defaults *node) []entry {
	var out []entry
	for i, k := range n.keys {
		name := k.value.(string)
		out = append(out, entry{name: name, key: k, val: n.vals[i], f: f.key(name)})
	}
	if defaults == nil {
		return out
	}
	for i, k := range defaults.keys {
		name := k.value.(string)
		if n.get(name) != nil || contains(notDefaultable, name) {
			continue
		}
		ef := field{path: f.key(name).path, disp: "default_args." + name}
		out = append(out, entry{name: name, key: k, val: defaults.vals[i], f: ef, fromDefault: true})
	}
	return out
}

func (d *decoder) taskField(t *core.Task, e entry) {
	v, f := e.val, e.f
	switch e.name {
	case "operator":
		// decoded first
	case "task_id":
		s, _ := d.str(v, f)
		if t.TaskID != "" && s != t.TaskID {
			d.fail(v, f, "is %q but the task's key is %q; drop task_id or make them equal", s, t.TaskID)
		}
		t.TaskID = s
	case "depends_on":
		t.DependsOn = d.strList(v, f)
	case "trigger_rule":
		s, _ := d.str(v, f)
		t.TriggerRule = core.TriggerRule(s)
	case "retries":
		t.Retries = d.integer(v, f)
	case "retry_delay":
		t.RetryDelay = d.duration(v, f)
	case "retry_exponential_backoff":
		t.RetryExponentialBackoff = d.boolean(v, f)
	case "max_retry_delay":
		t.MaxRetryDelay = d.duration(v, f)
	case "execution_timeout":
		t.ExecutionTimeout = d.duration(v, f)
	case "queue":
		t.Queue, _ = d.str(v, f)
	case "pool":
		t.Pool, _ = d.str(v, f)
	case "pool_slots":
		t.PoolSlots = d.integer(v, f)
		if t.PoolSlots < 1 && !d.failedAt(f) {
			d.fail(v, f, "must be a positive integer")
		}
	case "priority_weight":
		t.PriorityWeight = d.integer(v, f)
	case "env":
		t.Env = d.stringMap(v, f)
	case "expand":
		t.Expand = d.expand(v, f)
	case "iterate":
		t.Iterate, _ = d.str(v, f)
	case "stream":
		t.Stream = d.boolean(v, f)
	case "inlets":
		t.Inlets = d.assetRefs(v, f)
	case "outlets":
		t.Outlets = d.assetRefs(v, f)
	case "connections":
		t.Connections = d.strList(v, f)
	case "on_execute", "on_success", "on_failure", "on_retry", "on_skipped":
		d.taskCallback(t, e.name, v, f)
	default:
		d.operatorField(t, e)
	}
}

func (d *decoder) failedAt(f field) bool {
	return slices.ContainsFunc(d.probs, func(p Problem) bool { return p.Path == f.disp })
}

// operatorField decodes a field of the task's operator (bash_command, sql,
// ...). A default_args field that the operator does not take is ignored,
// as in Airflow; on the task itself it is an error.
func (d *decoder) operatorField(t *core.Task, e entry) {
	spec, ok := argSpecOf(t.Operator, e.name)
	if !ok {
		known := operators[t.Operator] != nil
		switch {
		case e.fromDefault:
		case !known && contains(allArgNames(), e.name):
			// The operator itself is missing or unknown; that is reported.
		case contains(allArgNames(), e.name):
			d.fail(e.key, e.f, "is not a field of %s tasks; allowed: %s", t.Operator, orNone(argNames(t.Operator)))
		case known:
			d.unknown(e.key, e.f, e.name, append(slices.Clone(taskFields), argNames(t.Operator)...))
		default:
			d.unknown(e.key, e.f, e.name, append(slices.Clone(taskFields), allArgNames()...))
		}
		return
	}
	var val any
	switch spec.kind {
	case argString:
		s, ok := d.str(e.val, e.f)
		if !ok {
			return
		}
		val = s
		if e.name == "method" {
			val = strings.ToUpper(s)
		}
	case argStringMap:
		m := d.stringMap(e.val, e.f)
		if m == nil {
			return
		}
		am := make(map[string]any, len(m))
		for k, s := range m {
			am[k] = s
		}
		val = am
	case argBool:
		if _, ok := e.val.value.(bool); !ok {
			d.boolean(e.val, e.f) // names the problem
			return
		}
		val = e.val.value
	case argMap:
		if e.val.kind != kMap {
			d.at(e.f, e.val)
			d.fail(e.val, e.f, "must be a mapping, not %s", describe(e.val))
			return
		}
		val, ok = d.toAny(e.val, e.f)
	default:
		val, ok = d.toAny(e.val, e.f)
	}
	if !ok {
		return
	}
	if t.Args == nil {
		t.Args = map[string]any{}
	}
	t.Args[e.name] = val
}

// expand decodes name → [values] | {xcom: task_id} | {xcom: {task_id, key}}.
func (d *decoder) expand(n *node, f field) map[string]core.ExpandSource {
	d.at(f, n)
	if n.kind != kMap {
		d.fail(n, f, "must be a mapping of argument names to lists or {xcom: task_id}, not %s", describe(n))
		return nil
	}
	out := make(map[string]core.ExpandSource, len(n.keys))
	for i, k := range n.keys {
		name := k.value.(string)
		v, ef := n.vals[i], f.key(name)
		d.at(ef, v)
		switch {
		case v.kind == kSeq:
			vals := make([]any, 0, len(v.items))
			for j, item := range v.items {
				x, _ := d.toAny(item, ef.idx(j))
				vals = append(vals, x)
			}
			out[name] = core.ExpandSource{Values: vals}
		case v.kind == kMap && len(v.keys) == 1 && v.get("xcom") != nil:
			if ref := d.xcomRef(v.get("xcom"), ef.key("xcom")); ref != nil {
				out[name] = core.ExpandSource{XCom: ref}
			}
		default:
			d.fail(v, ef, "must be a list of values, {xcom: task_id} or {xcom: {task_id: t, key: k}}, not %s", describe(v))
		}
	}
	return out
}

func (d *decoder) xcomRef(n *node, f field) *core.XComRef {
	d.at(f, n)
	if n.kind == kScalar {
		s, ok := d.str(n, f)
		if !ok {
			return nil
		}
		return &core.XComRef{TaskID: s}
	}
	if n.kind != kMap {
		d.fail(n, f, "must be an upstream task_id or {task_id: t, key: k}, not %s", describe(n))
		return nil
	}
	d.checkKeys(n, f, []string{"task_id", "key"})
	ref := &core.XComRef{}
	if v := n.get("task_id"); v != nil {
		ref.TaskID, _ = d.str(v, f.key("task_id"))
	} else {
		d.fail(n, f.key("task_id"), "is required")
	}
	if v := n.get("key"); v != nil {
		ref.Key, _ = d.str(v, f.key("key"))
	}
	return ref
}
