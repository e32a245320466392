package dagfile

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// dag decodes a DAG document.
func (d *decoder) dag(n *node) core.DAG {
	var dag core.DAG
	root := field{}
	if n.kind != kMap {
		d.fail(n, root, "a DAG document must be a mapping with dag_id and tasks, not %s", describe(n))
		return dag
	}
	d.checkKeys(n, root, dagFields)
	if v := n.get("dag_id"); v != nil {
		dag.DagID, _ = d.str(v, root.key("dag_id"))
	} else {
		d.fail(n, root.key("dag_id"), "is required")
	}
	if v := n.get("description"); v != nil {
		dag.Description, _ = d.str(v, root.key("description"))
	}
	loc := time.UTC
	if v := n.get("timezone"); v != nil {
		dag.Timezone, _ = d.str(v, root.key("timezone"))
		if l, err := time.LoadLocation(dag.Timezone); err == nil && dag.Timezone != "Local" {
			loc = l
		}
	}
	if v := n.get("schedule"); v != nil {
		d.schedule(v, root.key("schedule"), &dag)
	}
	if v := n.get("timetable"); v != nil {
		d.timetable(v, root.key("timetable"), &dag)
	}
	if v := n.get("assets"); v != nil {
		dag.Assets = d.assets(v, root.key("assets"))
	}
	if v := n.get("asset_runs"); v != nil {
		mode, _ := d.str(v, root.key("asset_runs"))
		dag.AssetRuns = core.AssetRunMode(mode)
	}
	if v := n.get("start_date"); v != nil {
		dag.StartDate = d.date(v, root.key("start_date"), loc)
	}
	if v := n.get("end_date"); v != nil {
		dag.EndDate = d.date(v, root.key("end_date"), loc)
	}
	if v := n.get("catchup"); v != nil {
		dag.Catchup = d.boolean(v, root.key("catchup"))
	}
	if v := n.get("is_paused_upon_creation"); v != nil {
		paused := d.boolean(v, root.key("is_paused_upon_creation"))
		dag.IsPausedUponCreation = &paused
	}
	for _, name := range []string{"max_active_runs", "max_active_tasks"} {
		if v := n.get(name); v != nil {
			i := d.integer(v, root.key(name))
			if i < 1 {
				d.fail(v, root.key(name), "must be a positive integer")
			}
			if name == "max_active_runs" {
				dag.MaxActiveRuns = i
			} else {
				dag.MaxActiveTasks = i
			}
		}
	}
	if v := n.get("tags"); v != nil {
		dag.Tags = d.strList(v, root.key("tags"))
	}
	if v := n.get("template_syntax"); v != nil {
		syntax, _ := d.str(v, root.key("template_syntax"))
		dag.TemplateSyntax = core.TemplateSyntax(syntax)
	}
	if v := n.get("params"); v != nil {
		dag.Params, dag.ParamDescriptions = d.params(v, root.key("params"))
	}
	d.dagCallbacks(n, &dag)
	defaults := d.defaultArgs(n.get("default_args"), root.key("default_args"))
	if v := n.get("tasks"); v != nil {
		dag.Tasks = d.tasks(v, root.key("tasks"), defaults)
	} else {
		d.fail(n, root.key("tasks"), "is required (a list of tasks, or a mapping of task_id to task)")
	}
	return dag
}

// params decodes name → default value, or name → {default: v, description: s};
// it returns the defaults and the descriptions given (nil when none).
func (d *decoder) params(n *node, f field) (map[string]any, map[string]string) {
	d.at(f, n)
	if n.kind != kMap {
		d.fail(n, f, "must be a mapping of parameter names to default values, not %s", describe(n))
		return nil, nil
	}
	out := make(map[string]any, len(n.keys))
	var docs map[string]string
	for i, k := range n.keys {
		name := k.value.(string)
		v, pf := n.vals[i], f.key(name)
		if keys := paramSchemaKeys(v); len(keys) > 0 {
			d.fail(v, pf, "%s: Airflow's Param schema keys are not supported; give {default: value, description: text} (to use this mapping itself as the default, write {default: {...}})",
				strings.Join(keys, ", "))
			continue
		}
		if isParamSpec(v) {
			if desc := v.get("description"); desc != nil {
				if text, ok := d.str(desc, pf.key("description")); ok && text != "" {
					if docs == nil {
						docs = map[string]string{}
					}
					docs[name] = text
				}
			}
			if def := v.get("default"); def != nil {
				out[name], _ = d.toAny(def, pf.key("default"))
			} else {
				out[name] = nil
			}
			continue
		}
		out[name], _ = d.toAny(v, pf)
	}
	return out, docs
}

// paramSchemaKeys returns the keys of Airflow's Param (JSON Schema) that a
// param's mapping with a default holds: a port of Param(5, type="integer")
// would otherwise become a mapping default, silently.
func paramSchemaKeys(n *node) []string {
	if n.kind != kMap || n.get("default") == nil {
		return nil
	}
	var keys []string
	for _, k := range n.keys {
		if name, _ := k.value.(string); slices.Contains(paramSchemaWords, name) {
			keys = append(keys, name)
		}
	}
	return keys
}

// paramSchemaWords are the keywords an Airflow Param takes besides default
// and description.
var paramSchemaWords = []string{"type", "title", "enum", "const", "format", "pattern", "minimum", "maximum",
	"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "items", "minItems",
	"maxItems", "uniqueItems", "properties", "required", "examples", "values_display", "section"}

// isParamSpec reports whether a param value is the {default, description}
// form rather than a mapping used as the default itself.
func isParamSpec(n *node) bool {
	if n.kind != kMap || len(n.keys) == 0 {
		return false
	}
	for _, k := range n.keys {
		if k.value != "default" && k.value != "description" {
			return false
		}
	}
	return true
}

// defaultArgs checks default_args and returns it (nil when absent).
func (d *decoder) defaultArgs(n *node, f field) *node {
	if n == nil || n.kind == kNull {
		return nil
	}
	d.at(f, n)
	if n.kind != kMap {
		d.fail(n, f, "must be a mapping of task fields to default values, not %s", describe(n))
		return nil
	}
	allowed := defaultArgFields()
	for _, k := range n.keys {
		name := k.value.(string)
		if contains(notDefaultable, name) {
			d.fail(k, f.key(name), "cannot be set in default_args; set it on each task")
		} else if !contains(allowed, name) {
			d.unknown(k, f.key(name), name, allowed)
		}
	}
	return n
}

// tasks decodes a list of tasks or a mapping of task_id to task.
func (d *decoder) tasks(n *node, f field, defaults *node) []core.Task {
	d.at(f, n)
	var out []core.Task
	switch n.kind {
	case kSeq:
		for i, item := range n.items {
			out = append(out, d.task(item, f.idx(i), "", defaults))
		}
	case kMap:
		for i, k := range n.keys {
			id := k.value.(string)
			tf := field{path: fmt.Sprintf("%s[%d]", f.path, i), disp: f.disp + "." + id}
			d.at(tf.key("task_id"), k)
			out = append(out, d.task(n.vals[i], tf, id, defaults))
		}
	default:
		d.fail(n, f, "must be a list of tasks or a mapping of task_id to task, not %s", describe(n))
	}
	return out
}
