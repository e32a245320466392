package template

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/template"
)

// VarRefs are the variables a task's templates read (VariableRefs).
type VarRefs struct {
	// Values and JSONs are the keys read as var.value.KEY (the string)
	// and var.json.KEY (its value decoded as JSON): each once, sorted.
	Values, JSONs []string
	// Optional holds the keys of Values and JSONs (as "value.KEY" and
	// "json.KEY") read only with a default, Jinja's
	// var.value.get('KEY', default): one that does not exist is left out
	// of the context, where the default applies.
	Optional map[string]bool
}

// VariableRefs lists the variables the templates in args (at any depth,
// as RenderArgs walks them) read as {{ var.value.KEY }} (the string) or
// {{ var.json.KEY }} (its value decoded as JSON), in Jinja or Go syntax
// ({{ .var.value.KEY }}: a template parses in at most one of them), and
// which of them only with a default: the worker fetches exactly these
// before rendering (WithVariables).
func VariableRefs(args any) VarRefs {
	found := map[string]map[string]bool{"value": {}, "json": {}} // key → required
	var visit func(v any)
	visit = func(v any) {
		switch x := v.(type) {
		case string:
			if strings.Contains(x, "var.") {
				scanVars(x, found)
				jinjaVarRefs(x, found)
			}
		case map[string]any:
			for _, e := range x {
				visit(e)
			}
		case map[string]string:
			for _, e := range x {
				visit(e)
			}
		case []any:
			for _, e := range x {
				visit(e)
			}
		case []string:
			for _, e := range x {
				visit(e)
			}
		}
	}
	visit(args)
	refs := VarRefs{Optional: map[string]bool{}}
	keys := func(form string) []string {
		out := make([]string, 0, len(found[form]))
		for k, required := range found[form] {
			out = append(out, k)
			if !required {
				refs.Optional[form+"."+k] = true
			}
		}
		slices.Sort(out)
		return out
	}
	refs.Values, refs.JSONs = keys("value"), keys("json")
	return refs
}

// scanVars adds the .var.value.KEY and .var.json.KEY fields of template s
// to found (a template that does not parse reads none: rendering reports it).
func scanVars(s string, found map[string]map[string]bool) {
	t, err := template.New("").Funcs(Funcs{}.funcMap()).Parse(s)
	if err != nil {
		return
	}
	rootFields(t, func(ident []string) {
		if len(ident) >= 3 && ident[0] == "var" && found[ident[1]] != nil {
			found[ident[1]][ident[2]] = true
		}
	})
}

// WithVariables adds the variables a task's templates read to a template
// context as .var.value (strings) and .var.json (decoded JSON). A value
// read as JSON that is not JSON is an error naming the variable.
func WithVariables(ctx map[string]any, values map[string]string, jsons map[string]string) (map[string]any, error) {
	v := make(map[string]any, len(values))
	for k, s := range values {
		v[k] = s
	}
	j := make(map[string]any, len(jsons))
	for k, s := range jsons {
		var x any
		if err := json.Unmarshal([]byte(s), &x); err != nil {
			return nil, fmt.Errorf("variable %q is read as JSON ({{ .var.json.%s }}) but its value is not JSON: %w", k, k, err)
		}
		j[k] = x
	}
	ctx["var"] = map[string]any{"value": v, "json": j}
	return ctx, nil
}
