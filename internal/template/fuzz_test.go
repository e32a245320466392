package template_test

import (
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/template"
)

// FuzzRender renders arbitrary templated fields over a real run context: it
// never panics, a field without "{{" comes back unchanged, and a field that
// Check accepts at load time does not fail to parse at render time.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"echo {{ .ds }}", "{{ .params.name }}", "{{ json .conf }}", "{{ .ti.try_number }}",
		"{{ if .params.x }}a{{ else }}b{{ end }}", "{{ .nope }}", "{{", "}}", "{{ printf \"%d\" 3 }}",
		"{{ xcom_pull \"t\" }}", "{{/* c */}}", "{{ .dag_run.conf.k | printf \"%q\" }}"} {
		f.Add(s)
	}
	ld := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	run := &core.DagRun{DagID: "d", RunID: "r", LogicalDate: &ld, DataIntervalStart: &ld, DataIntervalEnd: &ld, Conf: []byte(`{"k":"v"}`)}
	ti := &core.TaskInstance{DagID: "d", RunID: "r", TaskID: "t", MapIndex: -1, TryNumber: 1}
	ctx := template.Context(run, ti, map[string]any{"name": "Weir", "x": 1})
	f.Fuzz(func(t *testing.T, s string) {
		// A template may loop (range over an int); DAG authors already run
		// their own code, so only bounded inputs are of interest here.
		if len(s) > 512 || strings.Contains(s, "range") {
			return
		}
		out, err := template.Render(s, ctx, template.Funcs{})
		if !strings.Contains(s, "{{") && (err != nil || out != s) {
			t.Fatalf("plain %q rendered as %q (err %v), want unchanged", s, out, err)
		}
		if template.Check(core.TemplateGo, "field", s, nil) == nil && err != nil && strings.Contains(err.Error(), "invalid template") {
			t.Fatalf("%q passes Check but fails to parse when rendered: %v", s, err)
		}
	})
}

// FuzzRenderJinja is FuzzRender for Jinja: rendering never panics, a field
// that is no template comes back unchanged, and what Check accepts parses
// when rendered.
func FuzzRenderJinja(f *testing.F) {
	for _, s := range []string{"echo {{ ds }}", "{{ params.name | shquote }}", "{{ conf | tojson }}", "{{ ti.try_number }}",
		"{% if params.x %}a{% else %}b{% endif %}", "{{ nope }}", "{{", "{%", "}}", "{# c #}", "{{ macros.ds_add(ds, 1) }}",
		"{% for e in triggering_asset_events %}{{ e.uri }}{% endfor %}", "{{ logical_date.strftime('%Y') }}"} {
		f.Add(s)
	}
	ld := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	run := &core.DagRun{DagID: "d", RunID: "r", LogicalDate: &ld, DataIntervalStart: &ld, DataIntervalEnd: &ld, Conf: []byte(`{"k":"v"}`)}
	ti := &core.TaskInstance{DagID: "d", RunID: "r", TaskID: "t", MapIndex: -1, TryNumber: 1}
	ctx := template.Context(run, ti, map[string]any{"name": "Weir", "x": 1})
	funcs := template.Funcs{Syntax: core.TemplateJinja}
	f.Fuzz(func(t *testing.T, s string) {
		// Loops over range() are bounded only by the author, as in Airflow.
		if len(s) > 512 || strings.Contains(s, "range") || strings.Contains(s, "for") || strings.Contains(s, "*") {
			return
		}
		out, err := template.Render(s, ctx, funcs)
		if !strings.Contains(s, "{{") && !strings.Contains(s, "{%") && (err != nil || out != s) {
			t.Fatalf("plain %q rendered as %q (err %v), want unchanged", s, out, err)
		}
		if template.Check(core.TemplateJinja, "field", s, nil) == nil && err != nil && strings.Contains(err.Error(), "invalid template") {
			t.Fatalf("%q passes Check but fails to parse when rendered: %v", s, err)
		}
	})
}
