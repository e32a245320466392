package dagfile

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/template"
)

// templateSyntaxes are the values template_syntax takes.
var templateSyntaxes = []string{string(core.TemplateJinja), string(core.TemplateGo)}

// templateText is one templated string of a DAG and the path of its field.
type templateText struct{ path, text string }

// templateTexts lists the strings of d that are rendered as templates: the
// tasks' operator fields, their start triggers' kwargs, and the callbacks'
// commands, partition keys and extras, each with its field path.
func templateTexts(d *core.DAG) []templateText {
	var out []templateText
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case string:
			if strings.Contains(x, "{{") || strings.Contains(x, "{%") {
				out = append(out, templateText{path, x})
			}
		case map[string]any:
			for _, k := range sortedKeys(x) {
				walk(path+"."+k, x[k])
			}
		case map[string]string:
			for _, k := range sortedKeys(x) {
				walk(path+"."+k, x[k])
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	callbacks := func(prefix string, cbs *core.Callbacks, events []core.CallbackEvent) {
		for _, ev := range events {
			for i, spec := range cbs.For(ev) {
				p := fmt.Sprintf("%s%s[%d]", prefix, ev, i)
				walk(p+".command", spec.Command)
				walk(p+".partition_key", spec.PartitionKey)
				walk(p+".extra", spec.Extra)
			}
		}
	}
	callbacks("", d.Callbacks, core.DagCallbackEvents)
	for i := range d.Tasks {
		t := &d.Tasks[i]
		for _, k := range sortedKeys(t.Args) {
			walk(fmt.Sprintf("tasks[%d].%s", i, k), t.Args[k])
		}
		if t.StartTrigger != nil && len(t.StartTrigger.Trigger.Kwargs) > 0 {
			var kwargs any
			if json.Unmarshal(t.StartTrigger.Trigger.Kwargs, &kwargs) == nil {
				walk(fmt.Sprintf("tasks[%d].start_trigger.kwargs", i), kwargs)
			}
		}
		callbacks(fmt.Sprintf("tasks[%d].", i), t.Callbacks, core.TaskCallbackEvents)
	}
	return out
}

// applyTemplateSyntax settles d's template syntax when d does not say:
// Go when one of its templates is Go syntax ({{ .ds }}), else Jinja
// (Airflow's). It copies the syntax into every callback with templates
// (a command or notifier: a Go function has none), which a worker renders
// without the DAG.
func applyTemplateSyntax(d *core.DAG) {
	d.TemplateSyntax = syntaxOf(d)
	stamp := func(cbs *core.Callbacks, events []core.CallbackEvent) {
		for _, ev := range events {
			specs := cbs.For(ev)
			for i := range specs {
				if specs[i].Function == "" {
					specs[i].TemplateSyntax = d.TemplateSyntax
				}
			}
		}
	}
	stamp(d.Callbacks, core.DagCallbackEvents)
	for i := range d.Tasks {
		stamp(d.Tasks[i].Callbacks, core.TaskCallbackEvents)
	}
}

// syntaxOf is d's template syntax: the one it says, else Go when one of
// its templates is Go syntax ({{ .ds }}), else Jinja.
func syntaxOf(d *core.DAG) core.TemplateSyntax {
	if d.TemplateSyntax != "" {
		return d.TemplateSyntax
	}
	for _, t := range templateTexts(d) {
		if template.LooksGo(t.text) {
			return core.TemplateGo
		}
	}
	return core.TemplateJinja
}

// validateTemplateSyntax checks template_syntax and that d's templates do
// not mix Jinja and Go syntax, naming a field of each. It returns the
// syntax to check the templates in: d's, or the detected one when d's is
// unknown.
func validateTemplateSyntax(ps *problems, d *core.DAG) core.TemplateSyntax {
	switch d.TemplateSyntax {
	case "", core.TemplateJinja, core.TemplateGo:
	default:
		ps.add("template_syntax", "unknown template syntax %q; allowed: %s", d.TemplateSyntax, strings.Join(templateSyntaxes, ", "))
		c := *d
		c.TemplateSyntax = ""
		return syntaxOf(&c)
	}
	var jinja, goSyntax *templateText
	for _, t := range templateTexts(d) {
		switch {
		case template.LooksGo(t.text) && goSyntax == nil:
			goSyntax = &t
		case template.LooksJinja(t.text) && jinja == nil:
			jinja = &t
		}
	}
	if jinja != nil && goSyntax != nil {
		ps.add("template_syntax", "the DAG's templates mix Jinja (%s) and Go template syntax (%s); write them all in one syntax (Jinja, Airflow's: {{ ds }}) and say which with template_syntax",
			jinja.path, goSyntax.path)
	}
	return syntaxOf(d)
}
