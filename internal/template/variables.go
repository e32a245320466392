package template

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"time"
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
	eachString(args, func(x string) {
		if strings.Contains(x, "var.") {
			scanVars(x, found)
			jinjaVarRefs(x, found)
		}
	})
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

// eachString calls fn with every string in args, at any depth, as
// RenderArgs walks them.
func eachString(args any, fn func(string)) {
	switch x := args.(type) {
	case string:
		fn(x)
	case map[string]any:
		for _, e := range x {
			eachString(e, fn)
		}
	case map[string]string:
		for _, e := range x {
			eachString(e, fn)
		}
	case []any:
		for _, e := range x {
			eachString(e, fn)
		}
	case []string:
		for _, e := range x {
			eachString(e, fn)
		}
	}
}

// ReadsPreviousSuccess reports whether a template in args may read the
// previous successful run (prev_data_interval_start_success and the
// others of WithPreviousSuccess), which the worker then fetches.
func ReadsPreviousSuccess(args any) bool {
	reads := false
	eachString(args, func(x string) { reads = reads || strings.Contains(x, "prev_") })
	return reads
}

// WithPreviousSuccess adds to a template context Airflow's names of the
// previous successful run: prev_data_interval_start_success,
// prev_data_interval_end_success, prev_start_date_success and
// prev_end_date_success, each a timestamp, or None when there is none.
func WithPreviousSuccess(ctx map[string]any, dataIntervalStart, dataIntervalEnd, startDate, endDate *time.Time) map[string]any {
	for name, t := range map[string]*time.Time{"prev_data_interval_start_success": dataIntervalStart,
		"prev_data_interval_end_success": dataIntervalEnd, "prev_start_date_success": startDate, "prev_end_date_success": endDate} {
		if t == nil {
			ctx[name] = nil
		} else {
			ctx[name] = Time{t.UTC()}
		}
	}
	return ctx
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
