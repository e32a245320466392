package core

// TemplateSyntax is the language of a DAG's templates (docs/dag-files.md#templates).
type TemplateSyntax string

// The template syntaxes. "" (a DAG stored before the choice existed) is Go.
const (
	// TemplateJinja is Airflow's Jinja: {{ ds }}, {{ params.x }},
	// {{ macros.ds_add(ds, 1) }}.
	TemplateJinja TemplateSyntax = "jinja"
	// TemplateGo is Go's text/template: {{ .ds }}, {{ .params.x }}.
	TemplateGo TemplateSyntax = "go"
)

// IsJinja reports whether s is Jinja ("" and go are Go syntax).
func (s TemplateSyntax) IsJinja() bool { return s == TemplateJinja }
