package template

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// jinjaSchema is schema (a task's context with every name) as Jinja
// templates see it (jinjaData): with ti.xcom_pull, task_instance and macros.
var jinjaSchema = jinjaData(schema, Funcs{}, new(error))

// jinjaBuiltins are names every Jinja template has besides the context:
// gonja's global functions, and the names for, macro and call bind.
var jinjaBuiltins = []string{"loop", "caller", "varargs", "kwargs", "self", "true", "false", "none", "True", "False", "None"}

// checkJinjaNames reports the first name t (parsed from src) reads from its context that
// names (a task's context when nil) does not have. Names the template
// binds itself (for, set, with, macro) are its own and not checked.
func checkJinjaNames(field, src string, t *exec.Template, names map[string]any) error {
	ctx := jinjaSchema
	if names != nil {
		ctx = jinjaData(names, Funcs{}, new(error))
	}
	if err := checkFilters(field, t.Root()); err != nil {
		return err
	}
	if err := checkVarGets(field, t.Root()); err != nil {
		return err
	}
	bound := boundNames(src)
	var err error
	visitNames(t.Root(), func(ident []string) {
		if err == nil && !bound[ident[0]] && !jinjaEnv.Context.Has(ident[0]) && !slices.Contains(jinjaBuiltins, ident[0]) {
			err = lookupJinja(field, ident, ctx)
		}
	})
	return err
}

// checkVarGets reports a var.value.get (or var.json.get) call the worker
// cannot serve: its key must be a string literal, which the worker fetches
// before rendering, and its default the second argument.
func checkVarGets(field string, root nodes.Node) error {
	var err error
	walkAllNodes(root, func(n nodes.Node) bool {
		call, isGet := varGet(n)
		switch {
		case err != nil || !isGet:
		case call.key == "":
			err = fmt.Errorf("%s: var.%s.get needs the variable's key as a string literal, such as var.%s.get('region', 'eu')", field, call.form, call.form)
		case call.namedDefault:
			err = fmt.Errorf("%s: var.%s.get takes its default as the second argument: var.%s.get('%s', fallback), not default_var=", field, call.form, call.form, call.key)
		}
		return err == nil
	})
	return err
}

// checkFilters reports the first filter ({{ x | f }}) or test
// ({% if x is t %}) under root that Jinja does not have.
func checkFilters(field string, root nodes.Node) error {
	var err error
	walkAllNodes(root, func(n nodes.Node) bool {
		switch x := n.(type) {
		case filterCall: // {{ x | f }}, {% filter f %}
			if !jinjaEnv.Filters.Exists(x.Name) {
				err = fmt.Errorf("%s: unknown filter %q at line %d (docs/templates.md#filters lists them)", field, x.Name, x.Token.Line)
			}
		case *nodes.TestExpression:
			if err == nil && !jinjaEnv.Tests.Exists(x.Test.Name) {
				err = fmt.Errorf("%s: unknown test %q at line %d", field, x.Test.Name, x.Test.Token.Line)
			}
		}
		return err == nil
	})
	return err
}

// VariableRefs' Jinja half: jinjaVarRefs adds var.value.KEY and
// var.json.KEY of Jinja template s to found as required, and the keys of
// var.value.get('KEY', default) and var.json.get('KEY', default) as not
// required unless read otherwise too (a get without a default requires
// its variable, as Airflow's raises without one).
func jinjaVarRefs(s string, found map[string]map[string]bool) {
	t, err := parseJinja("", s)
	if err != nil {
		return
	}
	var visit func(root nodes.Node)
	visit = func(root nodes.Node) {
		walkAllNodes(root, func(n nodes.Node) bool {
			if call, ok := varGet(n); ok {
				if call.key != "" { // required when any read of it has no default
					found[call.form][call.key] = found[call.form][call.key] || !call.hasDefault
				}
				for _, r := range call.rest {
					visit(r)
				}
				return false
			}
			ident, rest := namePath(n)
			if ident == nil {
				return true
			}
			if len(ident) >= 3 && ident[0] == "var" && found[ident[1]] != nil {
				found[ident[1]][ident[2]] = true
			}
			for _, r := range rest {
				visit(r)
			}
			return false
		})
	}
	visit(t.Root())
}

// varGetCall is a call var.value.get(...) or var.json.get(...), Airflow's
// variable with a default.
type varGetCall struct {
	form         string       // "value" or "json"
	key          string       // "" when the key is not a string literal
	hasDefault   bool         // a second argument (or default_var=)
	namedDefault bool         // default_var=, which Jinja's dict get lacks
	rest         []nodes.Node // the arguments but a literal key
}

// varGet recognises a var.value.get or var.json.get call.
func varGet(n nodes.Node) (varGetCall, bool) {
	c, isCall := n.(*nodes.Call)
	if !isCall {
		return varGetCall{}, false
	}
	ident, inner := namePath(c.Func)
	if len(inner) > 0 || len(ident) != 3 || ident[0] != "var" || ident[2] != "get" || (ident[1] != "value" && ident[1] != "json") {
		return varGetCall{}, false
	}
	call := varGetCall{form: ident[1], hasDefault: len(c.Args) >= 2}
	for i, a := range c.Args {
		if k, literal := a.(*nodes.String); i == 0 && literal {
			call.key = k.Val
			continue
		}
		call.rest = append(call.rest, a)
	}
	for name, a := range c.Kwargs {
		call.rest = append(call.rest, a)
		if name == "default_var" {
			call.hasDefault, call.namedDefault = true, true
		}
	}
	return call, true
}

// lookupJinja follows ident through ctx as Jinja does: a name missing from
// a mapping may still be one of its methods (params.items()), a string
// has string methods, a timestamp its attributes (timeAttrs).
func lookupJinja(field string, ident []string, ctx map[string]any) error {
	var v any = ctx
	methods := jinjaEnv.Methods
	for i, name := range ident {
		unknown := func(known []string) error {
			return &UnknownNameError{Field: field, Name: strings.Join(ident[:i+1], "."), Known: known}
		}
		noField := func(kind string) error {
			return &UnknownNameError{Field: field, Name: strings.Join(ident[:i+1], "."), Parent: strings.Join(ident[:i], "."), Kind: kind}
		}
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[name]
			switch {
			case len(x) == 0:
				return nil // free-form: params, conf, map_args, var.value
			case ok:
				v = next
			case methods.Dict.Exists(name):
				return nil
			default:
				return unknown(slices.Sorted(maps.Keys(x)))
			}
		case Time:
			if _, ok := timeAttrs[name]; !ok {
				return unknown(slices.Sorted(maps.Keys(timeAttrs)))
			}
			return nil
		case string:
			if !methods.Str.Exists(name) {
				return noField("a string")
			}
			return nil
		case []map[string]any:
			if !methods.List.Exists(name) {
				return noField("a list (read its items with a for loop)")
			}
			return nil
		case int:
			if !methods.Int.Exists(name) {
				return noField("a number")
			}
			return nil
		default:
			return nil // a function (ti.xcom_pull, macros.ds_add): called, not read
		}
	}
	return nil
}

// visitNames calls visit with every name path a template reads from its
// context: {{ a.b['c'] }} is [a b c], in every statement (the bodies of
// set and with blocks and filter sections too: walkAllNodes).
func visitNames(root nodes.Node, visit func(ident []string)) {
	walkAllNodes(root, func(n nodes.Node) bool {
		ident, rest := namePath(n)
		if ident == nil {
			return true
		}
		visit(ident)
		for _, r := range rest {
			visitNames(r, visit)
		}
		return false
	})
}

// walkNodes calls f with each node under root, depth first, and descends
// into a node when f returns true. It walks the exported parts of the
// syntax tree, which hold every expression of the statements Weir allows
// except those of set, with and filter statements (kept in unexported
// fields: walkAllNodes reaches them).
func walkNodes(root nodes.Node, f func(nodes.Node) bool) {
	walkTree(root, false, f)
}

// walkAllNodes is walkNodes into every statement: it also reads the
// unexported fields gonja keeps the target, value and body of a set, the
// names and body of a with, and the filters and body of a filter section
// in, so the load-time check sees every name a template reads.
func walkAllNodes(root nodes.Node, f func(nodes.Node) bool) {
	walkTree(root, true, f)
}

// walkTree is walkNodes, and with private walkAllNodes.
func walkTree(root nodes.Node, private bool, f func(nodes.Node) bool) {
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] || v.Type() == reflect.TypeFor[*tokens.Token]() {
				return
			}
			seen[v.Pointer()] = true
			var n nodes.Node
			switch x := v.Interface().(type) {
			case nodes.Node:
				n = x
			case *nodes.FilterCall:
				n = filterCall{x}
			}
			if n != nil && !f(n) {
				return
			}
			walk(v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				field, fv := v.Type().Field(i), v.Field(i)
				switch {
				case field.Name == "Parent":
				case field.IsExported():
					walk(fv)
				case private && fv.CanAddr():
					// The field read as the syntax tree holds it; nothing is
					// written through it.
					walk(reflect.NewAt(field.Type, unsafe.Pointer(fv.UnsafeAddr())).Elem()) //nolint:gosec // G103: reads gonja's unexported syntax-tree fields
				}
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			for _, k := range v.MapKeys() {
				walk(v.MapIndex(k))
			}
		}
	}
	walk(reflect.ValueOf(root))
}

// namePath returns the name path n reads ([a b c] for a.b['c']), and the
// expressions inside it to walk on their own (a computed subscript, which
// ends the path: a[x].b reads a, then x); nil when n is not a name path.
func namePath(n nodes.Node) (ident []string, rest []nodes.Node) {
	extend := func(inner nodes.Node, next string) ([]string, []nodes.Node) {
		ident, rest := namePath(inner)
		if ident == nil || len(rest) > 0 {
			return ident, rest
		}
		return append(ident, next), nil
	}
	switch x := n.(type) {
	case *nodes.Name:
		return []string{x.Name.Val}, nil
	case *nodes.GetAttribute:
		return extend(x.Node, x.Attribute)
	case *nodes.GetItem:
		if key, ok := x.Arg.(*nodes.String); ok {
			return extend(x.Node, key.Val)
		}
		ident, rest := namePath(x.Node)
		if ident == nil {
			return nil, nil
		}
		return ident, append(rest, x.Arg)
	}
	return nil, nil
}

// boundNames lists the names template src binds itself: the targets of
// for and set, with's names, and macros with their parameters. They are
// read from the tokens of each statement's head, since set and with keep
// them unexported in the syntax tree.
func boundNames(src string) map[string]bool {
	bound := map[string]bool{}
	stream := tokens.LexAll(src, jinjaConfig)
	var head []*tokens.Token
	inBlock := false
	for !stream.End() {
		tok := stream.Next()
		switch {
		case tok.Type == tokens.BlockBegin:
			inBlock, head = true, nil
		case tok.Type == tokens.BlockEnd:
			bindHead(head, bound)
			inBlock = false
		case inBlock && tok.Type != tokens.Whitespace:
			head = append(head, tok)
		}
	}
	return bound
}

// bindHead adds the names a statement's head binds to bound.
func bindHead(head []*tokens.Token, bound map[string]bool) {
	if len(head) == 0 || head[0].Type != tokens.Name {
		return
	}
	rest := head[1:]
	for i, tok := range rest {
		if head[0].Val == "for" && (tok.Type == tokens.In || tok.Val == "in") {
			return
		}
		if tok.Type != tokens.Name {
			continue
		}
		assigned := i+1 < len(rest) && rest[i+1].Type == tokens.Assign
		switch head[0].Val {
		case "for":
			bound[tok.Val] = true
		case "set":
			if slices.ContainsFunc(rest[:i], func(t *tokens.Token) bool { return t.Type == tokens.Assign }) {
				return
			}
			bound[tok.Val] = true
		case "with":
			if assigned {
				bound[tok.Val] = true
			}
		case "macro", "call":
			bound[tok.Val] = true
		}
	}
}

// filterCall is a filter applied to an expression or a filter section, as
// a node of the walk (gonja's FilterCall is not a nodes.Node).
type filterCall struct{ *nodes.FilterCall }

// Position is where the filter is named.
func (c filterCall) Position() *tokens.Token { return c.Token }

// String names the filter.
func (c filterCall) String() string { return "filter " + c.Name }
