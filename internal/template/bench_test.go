package template

import (
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// benchArgs is a typical task's templated fields, in each syntax.
var benchArgs = map[core.TemplateSyntax]map[string]any{
	core.TemplateGo: {"bash_command": `./load.sh --day {{ .ds }} --region {{ .params.region | shquote }} --try {{ .ti.try_number }}`,
		"headers": map[string]any{"X-Run": "{{ .run_id }}"}, "sql": "SELECT * FROM t WHERE day = '{{ .ds }}'"},
	core.TemplateJinja: {"bash_command": `./load.sh --day {{ ds }} --region {{ params.region | shquote }} --try {{ ti.try_number }}`,
		"headers": map[string]any{"X-Run": "{{ run_id }}"}, "sql": "SELECT * FROM t WHERE day = '{{ ds }}'"},
}

// BenchmarkRenderArgs renders a task's three templated fields as a worker
// does before a try (docs/benchmarks.md#templates).
func BenchmarkRenderArgs(b *testing.B) {
	run, ti := testRun()
	ctx := Context(run, ti, map[string]any{"region": "eu"})
	for _, syntax := range []core.TemplateSyntax{core.TemplateGo, core.TemplateJinja} {
		b.Run(string(syntax), func(b *testing.B) {
			funcs := Funcs{Syntax: syntax}
			for b.Loop() {
				if _, err := RenderArgs(benchArgs[syntax], ctx, funcs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCheck checks the same fields as the DAG processor does when a
// file loads.
func BenchmarkCheck(b *testing.B) {
	for _, syntax := range []core.TemplateSyntax{core.TemplateGo, core.TemplateJinja} {
		b.Run(string(syntax), func(b *testing.B) {
			s := benchArgs[syntax]["bash_command"].(string)
			for b.Loop() {
				if err := Check(syntax, "bash_command", s, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
