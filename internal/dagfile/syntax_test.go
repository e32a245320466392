package dagfile

import (
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// A DAG's template syntax is what it says, else detected from its
// templates: Go when one is Go syntax, else Jinja; callbacks carry it.
func TestTemplateSyntaxDetected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cmd, top string // top: a DAG-level line
		want           core.TemplateSyntax
	}{
		{"jinja", `echo {{ ds }}`, "", core.TemplateJinja},
		{"jinja statement", `"{% if params.x %}x{% endif %}"`, "", core.TemplateJinja},
		{"no template", `echo hi`, "", core.TemplateJinja},
		{"go field", `echo {{ .ds }}`, "", core.TemplateGo},
		{"go function", `echo {{ xcom_pull "a" }}`, "", core.TemplateGo},
		{"go range", `"{{ range $i, $e := .params.list }}{{ $e }}{{ end }}"`, "", core.TemplateGo},
		{"explicit go", `echo hi`, "template_syntax: go\n", core.TemplateGo},
		{"explicit jinja", `echo hi`, "template_syntax: jinja\n", core.TemplateJinja},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc := "dag_id: d\n" + tc.top + "tasks:\n  - task_id: t\n    operator: bash\n    bash_command: " + tc.cmd + "\n" +
				"    on_failure: echo failed\n"
			dags, err := Load("d.yaml", []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			d := dags[0]
			if d.TemplateSyntax != tc.want {
				t.Errorf("template_syntax = %q, want %q", d.TemplateSyntax, tc.want)
			}
			if got := d.Tasks[0].Callbacks.OnFailure[0].TemplateSyntax; got != tc.want {
				t.Errorf("the callback's template_syntax = %q, want the DAG's %q", got, tc.want)
			}
		})
	}
}
