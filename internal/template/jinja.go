package template

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/nikolalohinski/gonja/v2"
	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
	"github.com/nikolalohinski/gonja/v2/parser"

	"github.com/weirflow/weir/internal/core"
)

// jinjaConfig is Jinja's default syntax with StrictUndefined: a missing
// name, attribute or key is an error, never an empty string (Airflow is
// lenient here; Weir is not).
var jinjaConfig = func() *config.Config {
	c := config.New()
	c.StrictUndefined = true
	return c
}()

// refusedStatements are the statements a DAG's template may not use, and
// why: most read other templates (on the worker's filesystem), which a DAG
// file has no business doing.
var refusedStatements = map[string]string{
	"include": "a DAG's template cannot read other templates",
	"import":  "a DAG's template cannot read other templates",
	"from":    "a DAG's template cannot read other templates",
	"extends": "a DAG's template cannot read other templates",
	"block":   "a DAG's template has no parent template to fill",
	"trans":   "Weir has no translations",
}

// jinjaEnv is the environment every Jinja template renders in: gonja's
// filters, tests and methods plus Airflow's filters (ds, ts, ...) and
// shquote, and the control structures less refusedStatements. It is built
// once and never changed.
var jinjaEnv = func() *exec.Environment {
	statements := map[string]parser.ControlStructureParser{}
	for _, name := range []string{"autoescape", "filter", "for", "if", "macro", "raw", "set", "with", "do", "break", "continue", "call"} {
		if p, ok := builtins.ControlStructures.Get(name); ok {
			statements[name] = p
		}
	}
	filters := exec.NewFilterSet(map[string]exec.FilterFunction{}).Update(builtins.Filters).Update(exec.NewFilterSet(maps.Clone(airflowFilters)))
	return &exec.Environment{
		// Jinja's lowercase none, which gonja's parser takes for a name.
		Context:           exec.EmptyContext().Update(builtins.GlobalFunctions).Update(builtins.GlobalVariables).Update(exec.NewContext(map[string]any{"none": nil})),
		Filters:           filters,
		Tests:             builtins.Tests,
		ControlStructures: exec.NewControlStructureSet(statements),
		Methods:           gonja.DefaultEnvironment.Methods,
	}
}()

// rootName is the name the one template of a source loader has.
const rootName = "template"

// sourceLoader serves one template's source and refuses every other name,
// so no template can read a file.
type sourceLoader struct{ src string }

func (l sourceLoader) Read(name string) (io.Reader, error) {
	if name != rootName {
		return nil, fmt.Errorf("templates cannot read other templates (%q)", name)
	}
	return strings.NewReader(l.src), nil
}
func (l sourceLoader) Resolve(name string) (string, error)    { return name, nil }
func (l sourceLoader) Inherit(string) (loaders.Loader, error) { return l, nil }

// parseJinja parses s as a Jinja template; an error names field and says
// what is wrong where, with a hint when s is Go template syntax.
func parseJinja(field, s string) (*exec.Template, error) {
	t, err := exec.NewTemplate(rootName, jinjaConfig, sourceLoader{s}, jinjaEnv)
	if err != nil {
		if cause := errors.Unwrap(err); cause != nil {
			err = cause
		}
		// gonja says where as "(Line: 0 Col: 0, near ...)" when it does not
		// know: the DAG file's line:col before the field says it instead.
		msg := strings.ReplaceAll(err.Error(), "(Line: 0 Col: 0, near ", "(near ")
		for name, why := range refusedStatements {
			if strings.Contains(msg, "'"+name+"'") && strings.Contains(s, name) {
				msg = fmt.Sprintf("{%% %s %%} is not allowed: %s", name, why)
			}
		}
		hint := ""
		if LooksGo(s) {
			hint = " (this looks like Go template syntax: write {{ ds }} instead of {{ .ds }}, or set template_syntax: go)"
		}
		return nil, fmt.Errorf("%s: invalid template: %s%s", field, msg, hint)
	}
	return t, nil
}

// renderJinja renders s as Jinja over ctx.
func renderJinja(field, s string, ctx map[string]any, funcs Funcs) (string, error) {
	t, err := parseJinja(field, s)
	if err != nil {
		return "", err
	}
	var failed error
	out, err := t.ExecuteToString(exec.NewContext(jinjaData(ctx, funcs, &failed)))
	if err != nil {
		return "", jinjaRenderError(field, err, failed)
	}
	return out, nil
}

// gonjaLine finds the line gonja names in a render error.
var gonjaLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`at line (\d+)`) })

// jinjaRenderError is a render error in the user's terms: the field, the
// line, and what went wrong once, without gonja's chain of evaluation
// steps. failed, when set, is the error a Weir function returned
// (xcom_pull's, a macro's): the error wraps it.
func jinjaRenderError(field string, err, failed error) error {
	msg := err.Error()
	detail := msg[strings.LastIndex(msg, ": ")+2:]
	if name, ok := strings.CutPrefix(detail, "Unable to evaluate name "); ok {
		detail = "unknown name " + name
	}
	cause := err
	if failed != nil {
		detail, cause = failed.Error(), failed
	}
	if m := gonjaLine().FindStringSubmatch(msg); m != nil {
		detail = "line " + m[1] + ": " + detail
	}
	return &renderError{msg: field + ": " + detail, err: cause}
}

// jinjaData is a template context (Context's) as Jinja templates see it,
// with Airflow's callables: ti.xcom_pull (and task_instance, the same ti)
// and macros. The first error one of them returns is kept in failed
// (gonja keeps only its text).
func jinjaData(ctx map[string]any, funcs Funcs, failed *error) map[string]any {
	keep := func(err error) error {
		if err != nil && *failed == nil {
			*failed = err
		}
		return err
	}
	data, _ := wholeNumbers(ctx).(map[string]any)
	if ti, ok := ctx["ti"].(map[string]any); ok {
		ti = maps.Clone(ti)
		ti["xcom_pull"] = func(args *exec.VarArgs) (any, error) {
			v, err := funcs.jinjaXComPull(args)
			return v, keep(err)
		}
		data["ti"], data["task_instance"] = ti, ti
	}
	macros := moreMacros(time.Now, keep)
	data["macros"] = macros
	maps.Copy(macros, map[string]any{
		"ds_add": func(ds string, days int) (string, error) {
			v, err := dsAdd(ds, days)
			return v, keep(err)
		},
		"ds_format": func(ds, in, out string) (string, error) {
			v, err := dsFormat(ds, in, out)
			return v, keep(err)
		},
	})
	return data
}

// wholeNumbers returns a copy of v with every whole float64 (what JSON
// decoding gives for 7) made an int, so Jinja prints 7 as Airflow does,
// not 7.0.
func wholeNumbers(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x)
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = wholeNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = wholeNumbers(e)
		}
		return out
	case []map[string]any:
		out := make([]map[string]any, len(x))
		for i, e := range x {
			out[i], _ = wholeNumbers(e).(map[string]any)
		}
		return out
	}
	return v
}

// jinjaXComPull is Airflow's ti.xcom_pull(task_ids=None, key="return_value"):
// task_ids is a task id (the value it pushed) or a list of them (a list of
// values), given first or by name.
func (f Funcs) jinjaXComPull(args *exec.VarArgs) (any, error) {
	pull := func(taskID, key string) (any, error) {
		if f.XComPull == nil {
			return nil, errNoXCom
		}
		return f.XComPull(taskID, key)
	}
	var ids *exec.Value
	key := core.DefaultXComKey
	for name, v := range args.KwArgs {
		switch name {
		case "task_ids":
			ids = v
		case "key":
			key = v.String()
		default:
			return nil, fmt.Errorf("xcom_pull: unsupported argument %s (task_ids and key are)", name)
		}
	}
	switch {
	case len(args.Args) > 1:
		return nil, errors.New("xcom_pull takes one positional argument, task_ids")
	case len(args.Args) == 1 && ids != nil:
		return nil, errors.New("xcom_pull: task_ids given twice")
	case len(args.Args) == 1:
		ids = args.Args[0]
	case ids == nil:
		return nil, errors.New("xcom_pull needs task_ids: ti.xcom_pull(task_ids='extract')")
	}
	if !ids.IsList() {
		v, err := pull(ids.String(), key)
		return wholeNumbers(v), err
	}
	var out []any
	for i := 0; i < ids.Len(); i++ {
		item, _ := ids.GetItem(i)
		v, err := pull(item.String(), key)
		if err != nil {
			return nil, err
		}
		out = append(out, wholeNumbers(v))
	}
	return out, nil
}
