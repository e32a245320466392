package template

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	tparse "text/template/parse"

	"github.com/weirflow/weir/internal/core"
)

// ShellQuote returns v as one POSIX shell word: v in single quotes, each
// single quote inside closed, escaped and reopened. Strings are quoted as
// they are; lists and maps as their JSON; nil as the empty word; other
// values as they print. It is the template function shquote:
// {{ .params.name | shquote }}.
func ShellQuote(v any) (string, error) {
	var s string
	switch x := v.(type) {
	case nil:
	case string:
		s = x
	case map[string]any, []any:
		var err error
		if s, err = toJSON(x); err != nil {
			return "", fmt.Errorf("shquote: %w", err)
		}
	default:
		s = fmt.Sprint(x)
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'", nil
}

// quoteFunc is the name of ShellQuote in templates.
const quoteFunc = "shquote"

// UnquotedTriggerData lists the places where template s prints data a
// trigger controls (.params, .conf, .dag_run.conf, and values taken from
// them with with, range or a variable) without passing it through shquote
// last, each as "{{ .params.name }} at line L, column C". A malformed
// template has none (Check reports it). In Jinja (syntax), it is each
// {{ }} that reads params, conf or dag_run.conf without | shquote last.
func UnquotedTriggerData(syntax core.TemplateSyntax, s string) []string {
	if !strings.Contains(s, "{{") {
		return nil
	}
	if syntax.IsJinja() {
		return unquotedJinja(s)
	}
	t, err := parse("bash_command", s, Funcs{})
	if err != nil {
		return nil
	}
	// The command itself first, then each {{ define }}d template.
	ts := t.Templates()
	sort.Slice(ts, func(i, j int) bool { return ts[i] == t || (ts[j] != t && ts[i].Name() < ts[j].Name()) })
	trees := map[string]*tparse.Tree{}
	for _, tt := range ts {
		if tt.Tree != nil {
			trees[tt.Name()] = tt.Tree
		}
	}
	var found []string
	seen := map[string]bool{}
	for _, tt := range ts {
		if tt.Tree == nil {
			continue
		}
		f := &taintFinder{tree: tt.Tree, trees: trees, vars: map[string]bool{}, calling: map[string]bool{}}
		f.walk(tt.Root, false)
		for _, s := range f.found {
			if !seen[s] { // a template called with trigger data is walked twice
				seen[s] = true
				found = append(found, s)
			}
		}
	}
	return found
}

// taintFinder walks a template tree, tracking whether dot and each
// variable hold trigger data.
type taintFinder struct {
	tree    *tparse.Tree
	trees   map[string]*tparse.Tree // every {{ define }}d template, by name
	vars    map[string]bool         // variable name → holds trigger data
	calling map[string]bool         // templates being walked with trigger data (recursion guard)
	found   []string
}

func (f *taintFinder) walk(n tparse.Node, dot bool) {
	switch x := n.(type) {
	case *tparse.ListNode:
		if x == nil {
			return
		}
		for _, c := range x.Nodes {
			f.walk(c, dot)
		}
	case *tparse.ActionNode:
		tainted := f.pipe(x.Pipe, dot)
		if len(x.Pipe.Decl) > 0 { // {{ $v := ... }} prints nothing
			for _, v := range x.Pipe.Decl {
				f.vars[v.Ident[0]] = tainted
			}
			return
		}
		if tainted && !endsQuoted(x.Pipe) {
			loc, _ := f.tree.ErrorContext(x)
			f.found = append(f.found, fmt.Sprintf("%s at %s", x, position(loc)))
		}
	case *tparse.IfNode:
		tainted := f.pipe(x.Pipe, dot)
		for _, v := range x.Pipe.Decl { // {{ if $v := ... }}
			f.vars[v.Ident[0]] = tainted
		}
		f.walk(x.List, dot)
		f.walk(x.ElseList, dot)
	case *tparse.TemplateNode: // {{ template "t" .params.x }}: walk t with that dot
		if t := f.trees[x.Name]; t != nil && f.pipe(x.Pipe, dot) && !f.calling[x.Name] {
			f.calling[x.Name] = true
			called := &taintFinder{tree: t, trees: f.trees, vars: map[string]bool{}, calling: f.calling}
			called.walk(t.Root, true)
			f.found = append(f.found, called.found...)
			delete(f.calling, x.Name)
		}
	case *tparse.WithNode:
		f.branch(&x.BranchNode, dot)
	case *tparse.RangeNode:
		f.branch(&x.BranchNode, dot)
	}
}

// branch walks a with or range: inside, dot is the pipeline's value.
func (f *taintFinder) branch(b *tparse.BranchNode, dot bool) {
	tainted := f.pipe(b.Pipe, dot)
	for _, v := range b.Pipe.Decl {
		f.vars[v.Ident[0]] = tainted
	}
	f.walk(b.List, tainted)
	f.walk(b.ElseList, dot)
}

// pipe reports whether a pipeline reads trigger data.
func (f *taintFinder) pipe(p *tparse.PipeNode, dot bool) bool {
	if p == nil {
		return false
	}
	for _, c := range p.Cmds {
		for _, a := range c.Args {
			if f.arg(a, dot) {
				return true
			}
		}
	}
	return false
}

func (f *taintFinder) arg(n tparse.Node, dot bool) bool {
	switch x := n.(type) {
	case *tparse.DotNode:
		return dot
	case *tparse.FieldNode:
		return dot || triggerField(x.Ident)
	case *tparse.VariableNode:
		if x.Ident[0] == "$" && len(x.Ident) > 1 {
			return triggerField(x.Ident[1:])
		}
		return f.vars[x.Ident[0]]
	case *tparse.ChainNode:
		return f.arg(x.Node, dot) || triggerField(x.Field)
	case *tparse.PipeNode:
		return f.pipe(x, dot)
	}
	return false
}

// triggerField reports whether a field path from the context root reaches
// data a trigger sets.
func triggerField(ident []string) bool {
	switch {
	case len(ident) == 0:
		return false
	case ident[0] == "params" || ident[0] == "conf":
		return true
	case ident[0] == "dag_run":
		return len(ident) > 1 && ident[1] == "conf"
	}
	return false
}

// endsQuoted reports whether a pipeline's last command is shquote.
func endsQuoted(p *tparse.PipeNode) bool {
	last := p.Cmds[len(p.Cmds)-1]
	id, ok := last.Args[0].(*tparse.IdentifierNode)
	return ok && id.Ident == quoteFunc
}

// position turns ErrorContext's "name:line:byte" (byte counted from 0)
// into "line L, column C" (from 1).
func position(loc string) string {
	parts := strings.Split(loc, ":")
	col, err := strconv.Atoi(parts[len(parts)-1])
	if len(parts) < 3 || err != nil {
		return loc
	}
	return "line " + parts[len(parts)-2] + ", column " + strconv.Itoa(col+1)
}
