package dagfile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// kind is the shape of a YAML value.
type kind int

const (
	kNull kind = iota
	kScalar
	kMap
	kSeq
)

func (k kind) String() string {
	return [...]string{"null", "a scalar", "a mapping", "a list"}[k]
}

// pos is a 1-based line and column in the file.
type pos struct{ line, col int }

// node is a YAML value with its position: the small tree the decoder walks,
// with anchors, aliases, merge keys and tags already resolved.
type node struct {
	kind   kind
	pos    pos
	value  any     // scalar: string, int64, uint64, float64 or bool
	keys   []*node // mapping keys (string scalars), in file order
	vals   []*node
	merged []bool  // per key: it came from a "<<" merge and may be overridden
	items  []*node // list items
}

// get returns the value of key in a mapping node, or nil.
func (n *node) get(key string) *node {
	for i, k := range n.keys {
		if k.value == key {
			return n.vals[i]
		}
	}
	return nil
}

// parseYAML parses every document of src. A syntax error, or nesting
// deeper than MaxDepth (refused before the parser runs), is returned as a
// Problem with its position.
func parseYAML(src []byte) ([]*node, *Problem) {
	if p := prescan(src); p != nil {
		return nil, p
	}
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		return nil, syntaxProblem(err)
	}
	var docs []*node
	for _, d := range f.Docs {
		c := converter{anchors: map[string]*node{}}
		n, err := c.convert(d.Body, 0)
		if err != nil {
			var ce *convertError
			if errors.As(err, &ce) {
				return nil, &Problem{Line: ce.pos.line, Col: ce.pos.col, Msg: ce.msg}
			}
			return nil, &Problem{Msg: err.Error()}
		}
		if n.kind != kNull {
			docs = append(docs, n)
		}
	}
	return docs, nil
}

func syntaxProblem(err error) *Problem {
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil {
		return &Problem{Msg: "invalid YAML: " + err.Error()}
	}
	msg := "invalid YAML: " + ye.GetMessage()
	if strings.Contains(msg, "'@' is a reserved character") {
		msg += `; quote the value, as in schedule: "@daily"`
	}
	p := ye.GetToken().Position
	return &Problem{Line: p.Line, Col: p.Column, Msg: msg}
}

type convertError struct {
	pos pos
	msg string
}

func (e *convertError) Error() string { return e.msg }

type converter struct {
	anchors map[string]*node
}

func posOf(n ast.Node) pos {
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return pos{tk.Position.Line, tk.Position.Column}
	}
	return pos{}
}

func (c *converter) fail(n ast.Node, format string, args ...any) error {
	return &convertError{pos: posOf(n), msg: fmt.Sprintf(format, args...)}
}

func (c *converter) convert(n ast.Node, depth int) (*node, error) {
	if n == nil {
		return &node{kind: kNull}, nil
	}
	if depth > MaxDepth {
		return nil, c.fail(n, "nesting deeper than %d levels, the limit of a DAG file", MaxDepth)
	}
	p := posOf(n)
	switch x := n.(type) {
	case *ast.NullNode, *ast.CommentGroupNode, *ast.CommentNode:
		return &node{kind: kNull, pos: p}, nil
	case *ast.BoolNode:
		return &node{kind: kScalar, pos: p, value: x.Value}, nil
	case *ast.IntegerNode:
		return &node{kind: kScalar, pos: p, value: x.Value}, nil
	case *ast.FloatNode:
		return &node{kind: kScalar, pos: p, value: x.Value}, nil
	case *ast.StringNode:
		return &node{kind: kScalar, pos: p, value: x.Value}, nil
	case *ast.LiteralNode:
		if x.Value == nil {
			return &node{kind: kScalar, pos: p, value: ""}, nil
		}
		return &node{kind: kScalar, pos: p, value: x.Value.Value}, nil
	case *ast.InfinityNode, *ast.NanNode:
		return nil, c.fail(n, "infinity and NaN are not allowed")
	case *ast.AnchorNode:
		v, err := c.convert(x.Value, depth+1)
		if err != nil {
			return nil, err
		}
		if x.Name != nil {
			c.anchors[x.Name.GetToken().Value] = v
		}
		return v, nil
	case *ast.AliasNode:
		name := ""
		if x.Value != nil {
			name = x.Value.GetToken().Value
		}
		v, ok := c.anchors[name]
		if !ok {
			return nil, c.fail(n, "unknown alias *%s", name)
		}
		return v, nil
	case *ast.TagNode:
		return c.tagged(x, depth)
	case *ast.MappingNode:
		m := &node{kind: kMap, pos: p}
		for _, mv := range x.Values {
			if err := c.addEntry(m, mv, depth); err != nil {
				return nil, err
			}
		}
		if len(m.keys) > 0 && !x.IsFlowStyle {
			m.pos = m.keys[0].pos // a block mapping starts at its first key
		}
		return m, nil
	case *ast.MappingValueNode:
		m := &node{kind: kMap, pos: p}
		if err := c.addEntry(m, x, depth); err != nil {
			return nil, err
		}
		m.pos = m.keys[0].pos
		return m, nil
	case *ast.SequenceNode:
		s := &node{kind: kSeq, pos: p}
		for _, item := range x.Values {
			v, err := c.convert(item, depth+1)
			if err != nil {
				return nil, err
			}
			s.items = append(s.items, v)
		}
		return s, nil
	}
	return nil, c.fail(n, "unsupported YAML construct %s", n.Type())
}

func (c *converter) tagged(x *ast.TagNode, depth int) (*node, error) {
	v, err := c.convert(x.Value, depth+1)
	if err != nil {
		return nil, err
	}
	switch tag := x.Start.Value; tag {
	case "!!str":
		if v.kind == kScalar || v.kind == kNull {
			raw := ""
			if x.Value != nil {
				raw = x.Value.GetToken().Value
			}
			return &node{kind: kScalar, pos: v.pos, value: raw}, nil
		}
		return nil, c.fail(x, "!!str applied to %s", v.kind)
	case "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq":
		return v, nil
	default:
		return nil, c.fail(x, "unsupported tag %s", tag)
	}
}

func (c *converter) addEntry(m *node, mv *ast.MappingValueNode, depth int) error {
	if mv.Key == nil {
		return c.fail(mv, "mapping entry without a key")
	}
	val, err := c.convert(mv.Value, depth+1)
	if err != nil {
		return err
	}
	if mk, ok := mv.Key.(*ast.MergeKeyNode); ok {
		return c.merge(m, mk, val)
	}
	k, err := c.convert(mv.Key, depth+1)
	if err != nil {
		return err
	}
	if k.kind != kScalar {
		return c.fail(mv.Key, "mapping keys must be plain strings, not %s", k.kind)
	}
	key := &node{kind: kScalar, pos: k.pos, value: fmt.Sprint(k.value)}
	for i, old := range m.keys {
		if old.value != key.value {
			continue
		}
		if m.merged[i] {
			m.keys[i], m.vals[i], m.merged[i] = key, val, false
			return nil
		}
		return &convertError{pos: key.pos, msg: fmt.Sprintf("duplicate key %q (first at line %d)", key.value, old.pos.line)}
	}
	m.keys = append(m.keys, key)
	m.vals = append(m.vals, val)
	m.merged = append(m.merged, false)
	return nil
}

// merge applies a "<<" merge key: entries of the merged mapping(s) that the
// mapping does not define itself.
func (c *converter) merge(m *node, mk ast.Node, val *node) error {
	var srcs []*node
	switch val.kind {
	case kMap:
		srcs = []*node{val}
	case kSeq:
		srcs = val.items
	default: // a scalar or null merges nothing: an error below
	}
	if len(srcs) == 0 {
		return c.fail(mk, "<< must merge a mapping or a list of mappings")
	}
	for _, src := range srcs {
		if src.kind != kMap {
			return c.fail(mk, "<< must merge a mapping or a list of mappings")
		}
		for i, k := range src.keys {
			if m.get(k.value.(string)) == nil {
				m.keys = append(m.keys, k)
				m.vals = append(m.vals, src.vals[i])
				m.merged = append(m.merged, true)
			}
		}
	}
	return nil
}
