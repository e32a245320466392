package template

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"
	tparse "text/template/parse"

	"github.com/weirflow/weir/internal/core"
)

// UnknownNameError is a template that reads a name the task context does
// not have ({{ .parms.x }}, {{ .ti.try }}), found when the DAG is loaded
// instead of when the task runs.
type UnknownNameError struct {
	Field string   // the templated field's path, "bash_command"
	Name  string   // the name as written, ".parms" or ".ti.try"
	Known []string // the names that exist where it was looked up; none when Parent is set
	// Parent names a value that has no fields at all, ".ds", and Kind
	// says what it is, "a string".
	Parent, Kind string
}

func (e *UnknownNameError) Error() string {
	if e.Parent != "" {
		return fmt.Sprintf("%s: %s is %s: it has no field %q", e.Field, e.Parent, e.Kind, e.Last())
	}
	return fmt.Sprintf("%s: unknown name %s in the template context (known here: %s)", e.Field, e.Name, strings.Join(e.Known, ", "))
}

// Last returns the unknown name's last part (what a "did you mean" compares).
func (e *UnknownNameError) Last() string { return e.Name[strings.LastIndex(e.Name, ".")+1:] }

// schema is a task's template context with every name present, as the
// worker builds it (Context, WithEvents, WithVariables): checkNames compares
// a template's names with it. An empty mapping in it (params, conf,
// map_args, var.value, ...) takes any name; a timestamp takes any method.
var schema = func() map[string]any {
	ctx := WithEvents(Context(&core.DagRun{}, &core.TaskInstance{}, nil), nil, 0)
	ctx, _ = WithVariables(ctx, nil, nil)
	return WithPreviousSuccess(ctx, nil, nil, nil, nil)
}()

// checkNames reports the first name of t read from the root of the context
// ({{ .x.y }}, {{ $.x.y }}) that names (the task context when nil) does not have.
func checkNames(field string, t *template.Template, names map[string]any) error {
	if names == nil {
		names = schema
	}
	var err error
	rootFields(t, func(ident []string) {
		if err == nil {
			err = lookup(field, ident, names)
		}
	})
	return err
}

// lookup follows ident through names.
func lookup(field string, ident []string, names map[string]any) error {
	var v any = names
	for i, name := range ident {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 {
				return nil // free-form: params, conf, map_args, var.value
			}
			next, ok := x[name]
			if !ok {
				return &UnknownNameError{Field: field, Name: "." + strings.Join(ident[:i+1], "."), Known: slices.Sorted(maps.Keys(x))}
			}
			v = next
		case Time:
			return nil // a method such as .Format
		default:
			return &UnknownNameError{Field: field, Name: "." + strings.Join(ident[:i+1], "."),
				Parent: "." + strings.Join(ident[:i], "."), Kind: kind(v)}
		}
	}
	return nil
}

// kind describes a context value without fields.
func kind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int, int64, float64:
		return "a number"
	case []map[string]any:
		return "a list (read its items with range)"
	}
	return fmt.Sprintf("a %T", v)
}

// rootFields calls visit with the identifiers of every field t reads from
// the root of its data: {{ .a.b }} outside range and with (where the dot is
// something else) and {{ $.a.b }} anywhere.
func rootFields(t *template.Template, visit func(ident []string)) {
	var walk func(n tparse.Node, atRoot bool)
	walkBranch := func(pipe *tparse.PipeNode, list, elseList *tparse.ListNode, atRoot bool) {
		walk(pipe, atRoot)
		walk(list, false) // the dot is the range element or the with value
		walk(elseList, atRoot)
	}
	walk = func(n tparse.Node, atRoot bool) {
		switch x := n.(type) {
		case *tparse.ListNode:
			if x != nil {
				for _, c := range x.Nodes {
					walk(c, atRoot)
				}
			}
		case *tparse.ActionNode:
			walk(x.Pipe, atRoot)
		case *tparse.IfNode:
			walk(x.Pipe, atRoot)
			walk(x.List, atRoot)
			walk(x.ElseList, atRoot)
		case *tparse.RangeNode:
			walkBranch(x.Pipe, x.List, x.ElseList, atRoot)
		case *tparse.WithNode:
			walkBranch(x.Pipe, x.List, x.ElseList, atRoot)
		case *tparse.TemplateNode:
			walk(x.Pipe, atRoot)
		case *tparse.PipeNode:
			if x != nil {
				for _, c := range x.Cmds {
					for _, a := range c.Args {
						walk(a, atRoot)
					}
				}
			}
		case *tparse.FieldNode:
			if atRoot {
				visit(x.Ident)
			}
		case *tparse.VariableNode:
			if x.Ident[0] == "$" && len(x.Ident) > 1 {
				visit(x.Ident[1:])
			}
		}
	}
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			walk(tt.Root, true)
		}
	}
}
