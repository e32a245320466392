// Package template renders the templated fields of a task (bash_command,
// sql, endpoint, ...) and of a callback over the run context, with
// Airflow's names, in the DAG's syntax (ADR 0023): Jinja through gonja
// ({{ ds }}, {{ params.x }}, {{ ti.xcom_pull(task_ids='a') }},
// {{ macros.ds_add(ds, 1) }}) or Go's text/template ({{ .ds }},
// {{ .params.x }}, {{ xcom_pull "a" }}). A missing key is an error, never an
// empty string. {{ params.x | shquote }} quotes a value for a shell
// command, and UnquotedTriggerData finds where a command prints trigger
// data unquoted. Check finds a malformed template or an unknown name when
// the DAG is loaded.
package template

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/weirflow/weir/internal/core"
)

// Funcs says how to render: the DAG's template syntax, and the functions
// that need the outside world (the worker fills XComPull with a call to
// the Execution API).
type Funcs struct {
	// Syntax is the DAG's template syntax ("" = Go).
	Syntax core.TemplateSyntax
	// XComPull returns the value an upstream task pushed under key (the
	// decoded JSON value). Nil makes xcom_pull an error.
	XComPull func(taskID, key string) (any, error)
}

// errNoXCom is returned by xcom_pull when the caller supplied no XComPull.
var errNoXCom = errors.New("xcom_pull is not available here")

func (f Funcs) funcMap() template.FuncMap {
	pull := func(taskID, key string) (any, error) {
		if f.XComPull == nil {
			return nil, errNoXCom
		}
		return f.XComPull(taskID, key)
	}
	return template.FuncMap{
		"xcom_pull":     func(taskID string) (any, error) { return pull(taskID, core.DefaultXComKey) },
		"xcom_pull_key": pull,
		"json":          toJSON,
		"tojson":        toJSON,
		quoteFunc:       ShellQuote,
	}
}

func toJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Render renders s over ctx in funcs.Syntax. A string that is not a
// template (no "{{", nor "{%" in Jinja) is returned unchanged.
func Render(s string, ctx map[string]any, funcs Funcs) (string, error) {
	return render("template", s, ctx, funcs)
}

func render(name, s string, ctx map[string]any, funcs Funcs) (string, error) {
	if !isTemplate(funcs.Syntax, s) {
		return s, nil
	}
	if funcs.Syntax.IsJinja() {
		return renderJinja(name, s, ctx, funcs)
	}
	t, err := parse(name, s, funcs)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, ctx); err != nil {
		// text/template's message already names the field, line and column.
		return "", &renderError{msg: strings.TrimPrefix(err.Error(), "template: "), err: err}
	}
	return b.String(), nil
}

func parse(name, s string, funcs Funcs) (*template.Template, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(funcs.funcMap()).Parse(s)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "template: "+name+":")
		return nil, fmt.Errorf("%s: invalid template: line %s", name, msg)
	}
	return t, nil
}

// renderError is a template execution error without text/template's
// "template: " prefix; it unwraps to the cause (such as xcom_pull's error).
type renderError struct {
	msg string
	err error
}

func (e *renderError) Error() string { return e.msg }
func (e *renderError) Unwrap() error { return e.err }

// isTemplate reports whether s is a template in syntax (Jinja's
// statements need no "{{").
func isTemplate(syntax core.TemplateSyntax, s string) bool {
	return strings.Contains(s, "{{") || (syntax.IsJinja() && strings.Contains(s, "{%"))
}

// Check parses s (in syntax) without rendering it, so that DAG validation
// reports a malformed template at load time, and reports a name the
// context does not have (*UnknownNameError). field names it in the error.
// names is a sample of the context the template is rendered over (a
// callback's, say); nil means a task's, as the worker builds it.
func Check(syntax core.TemplateSyntax, field, s string, names map[string]any) error {
	if !isTemplate(syntax, s) {
		return nil
	}
	if syntax.IsJinja() {
		t, err := parseJinja(field, s)
		if err != nil {
			return err
		}
		return checkJinjaNames(field, s, t, names)
	}
	t, err := parse(field, s, Funcs{})
	if err != nil {
		return err
	}
	return checkNames(field, t, names)
}

// RenderArgs returns a copy of args with every string rendered, looking
// into nested maps and lists. An error names the field path, such as
// "headers.Authorization" or "data[2]".
func RenderArgs(args map[string]any, ctx map[string]any, funcs Funcs) (map[string]any, error) {
	out, err := renderValue("", args, ctx, funcs)
	if err != nil {
		return nil, err
	}
	m, _ := out.(map[string]any)
	return m, nil
}

func renderValue(path string, v any, ctx map[string]any, funcs Funcs) (any, error) {
	switch x := v.(type) {
	case string:
		return render(path, x, ctx, funcs)
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) {
			r, err := renderValue(join(path, k), x[k], ctx, funcs)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case map[string]string:
		out := make(map[string]string, len(x))
		for _, k := range sortedKeys(x) {
			r, err := render(join(path, k), x[k], ctx, funcs)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := renderValue(path+"["+strconv.Itoa(i)+"]", e, ctx, funcs)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			r, err := render(path+"["+strconv.Itoa(i)+"]", e, ctx, funcs)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
