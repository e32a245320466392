package dagfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// schemaRules is Schema, compiled once.
var schemaRules = sync.OnceValues(func() (*rule, error) { return compileRules(Schema) })

// schemaProblems validates a document against the published JSON Schema.
// The loader's own checks run first and give the precise messages; this
// pass makes the schema binding, so a file an editor flags is never loaded.
func schemaProblems(file string, doc *node) []Problem {
	s, err := schemaRules()
	if err != nil {
		return []Problem{{File: file, Msg: fmt.Sprintf("the DAG file schema does not compile: %v", err)}}
	}
	d := &decoder{locs: map[string]fieldLoc{}, budget: maxValueNodes}
	v, ok := d.toAny(doc, field{})
	if !ok {
		return nil // too large: the decoder has reported it
	}
	inst, err := jsonValue(v)
	if err != nil {
		return []Problem{{File: file, Line: doc.pos.line, Col: doc.pos.col, Msg: err.Error()}}
	}
	var out []Problem
	if s.matches(inst) {
		return nil
	}
	for _, bad := range (checker{}).check(s, inst, nil) {
		n, path := locateInstance(doc, bad.at)
		out = append(out, Problem{File: file, Line: n.pos.line, Col: n.pos.col, Path: path,
			Msg: "does not match the DAG file schema: " + bad.msg()})
	}
	return out
}

// jsonValue returns v as JSON gives it back (numbers as json.Number), the
// form the schema is checked on.
func jsonValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	return out, dec.Decode(&out)
}

// locateInstance follows a JSON pointer's tokens through the YAML tree and
// returns the deepest node found with its field path ("tasks[2].retries").
func locateInstance(doc *node, tokens []string) (*node, string) {
	n, path := doc, ""
	for _, tok := range tokens {
		var next *node
		switch n.kind {
		case kMap:
			next = n.get(tok)
			if next != nil {
				path = strings.TrimPrefix(path+"."+tok, ".")
			}
		case kSeq:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.items) {
				next = n.items[i]
				path += "[" + tok + "]"
			}
		default:
		}
		if next == nil {
			break
		}
		n = next
	}
	return n, path
}

// violation is one innermost reason a value does not match: where (the
// JSON pointer's tokens) and what (formatted only when reported).
type violation struct {
	at  []string
	msg func() string
}

// checker validates a value against rules; a quick one only decides
// whether it matches: it stops at the first violation.
type checker struct{ quick bool }

// check returns the innermost violations of r by v (a value decoded from
// JSON with UseNumber), located under at; none when v matches.
func (c checker) check(r *rule, v any, at []string) []violation {
	if r.never {
		return []violation{{at, func() string { return "false schema" }}}
	}
	t := jsonType(v)
	if len(r.types) > 0 && !slices.Contains(r.types, t) && (t != "number" || !slices.Contains(r.types, "integer") || !isInteger(v)) {
		return []violation{{at, func() string { return fmt.Sprintf("got %s, want %s", t, strings.Join(r.types, " or ")) }}}
	}
	if r.hasConst && !jsonEqual(v, r.constant) {
		return []violation{{at, func() string { return "value must be " + display(r.constant) }}}
	}
	if r.enum != nil && !slices.ContainsFunc(r.enum, func(e any) bool { return jsonEqual(v, e) }) {
		return []violation{{at, r.enumMessage}}
	}
	var out []violation
	add := func(vs ...violation) bool {
		out = append(out, vs...)
		return c.quick && len(out) > 0
	}
	if r.ref != nil && add(c.check(r.ref, v, at)...) {
		return out
	}
	switch v := v.(type) {
	case map[string]any:
		if add(c.checkObject(r, v, at)...) {
			return out
		}
	case []any:
		if r.minItems >= 0 && len(v) < r.minItems && add(violation{at, func() string {
			return fmt.Sprintf("minItems: got %d, want %d", len(v), r.minItems)
		}}) {
			return out
		}
		for i, item := range v {
			if r.items != nil && add(c.check(r.items, item, c.appendAt(at, i))...) {
				return out
			}
		}
	case string:
		n := utf8.RuneCountInString(v)
		if r.minLength >= 0 && n < r.minLength {
			add(violation{at, func() string { return fmt.Sprintf("minLength: got %d, want %d", n, r.minLength) }})
		}
		if r.maxLength >= 0 && n > r.maxLength {
			add(violation{at, func() string { return fmt.Sprintf("maxLength: got %d, want %d", n, r.maxLength) }})
		}
		if r.pattern != nil && !r.pattern.MatchString(v) {
			add(violation{at, func() string {
				return fmt.Sprintf("%s does not match pattern %s", quote(v), quote(r.pattern.String()))
			}})
		}
		if c.quick && len(out) > 0 {
			return out
		}
	case json.Number:
		if got, ok := new(big.Rat).SetString(string(v)); ok && r.minimum != nil && got.Cmp(r.minimum) < 0 && add(violation{at, func() string {
			g, _ := got.Float64()
			w, _ := r.minimum.Float64()
			return fmt.Sprintf("minimum: got %v, want %v", g, w)
		}}) {
			return out
		}
	}
	add(c.checkApplicators(r, v, at)...)
	return out
}

func (c checker) checkObject(r *rule, obj map[string]any, at []string) []violation {
	var out []violation
	if r.minProperties >= 0 && len(obj) < r.minProperties {
		out = append(out, violation{at, func() string {
			return fmt.Sprintf("minProperties: got %d, want %d", len(obj), r.minProperties)
		}})
	}
	var missing []string
	for _, name := range r.required {
		if _, ok := obj[name]; !ok {
			missing = append(missing, quote(name))
		}
	}
	if missing != nil {
		out = append(out, violation{at, func() string {
			if len(missing) == 1 {
				return "missing property " + missing[0]
			}
			return "missing properties " + strings.Join(missing, ", ")
		}})
	}
	var extra []string
	for name := range c.names(obj) {
		if c.quick && len(out) > 0 {
			return out
		}
		p := r.properties[name]
		if p == nil {
			p = r.additional
		}
		switch {
		case p == nil:
		case p.never && r.properties[name] == nil:
			extra = append(extra, quote(name))
		default:
			out = append(out, c.check(p, obj[name], c.appendAt(at, name))...)
		}
		if r.propertyNames != nil && !r.propertyNames.matches(name) {
			out = append(out, violation{at, func() string { return "invalid propertyName " + quote(name) }})
		}
	}
	if extra != nil {
		out = append(out, violation{at, func() string { return "additional properties " + strings.Join(extra, ", ") + " not allowed" }})
	}
	return out
}

// checkApplicators applies not, allOf, anyOf, oneOf and if/then/else.
func (c checker) checkApplicators(r *rule, v any, at []string) []violation {
	var out []violation
	add := func(vs ...violation) bool {
		out = append(out, vs...)
		return c.quick && len(out) > 0
	}
	if r.not != nil && r.not.matches(v) && add(violation{at, func() string { return "'not' failed" }}) {
		return out
	}
	for _, s := range r.allOf {
		if add(c.check(s, v, at)...) {
			return out
		}
	}
	if r.anyOf != nil && !slices.ContainsFunc(r.anyOf, func(s *rule) bool { return s.matches(v) }) {
		for _, s := range r.anyOf {
			if add(c.check(s, v, at)...) {
				return out
			}
		}
	}
	if r.oneOf != nil {
		var matched []int
		for i, s := range r.oneOf {
			if s.matches(v) {
				matched = append(matched, i)
			}
		}
		switch {
		case len(matched) == 0:
			for _, s := range r.oneOf {
				if add(c.check(s, v, at)...) {
					return out
				}
			}
		case len(matched) > 1:
			add(violation{at, func() string {
				return fmt.Sprintf("'oneOf' failed, subschemas %d, %d matched", matched[0], matched[1])
			}})
		}
	}
	switch {
	case r.ifRule == nil:
	case r.ifRule.matches(v):
		if r.thenRule != nil {
			add(c.check(r.thenRule, v, at)...)
		}
	case r.elseRule != nil:
		add(c.check(r.elseRule, v, at)...)
	}
	return out
}

func (r *rule) matches(v any) bool { return len(checker{quick: true}.check(r, v, nil)) == 0 }

func (r *rule) enumMessage() string {
	want := make([]string, len(r.enum))
	for i, e := range r.enum {
		want[i] = display(e)
	}
	if len(want) == 1 {
		return "value must be " + want[0]
	}
	return "value must be one of " + strings.Join(want, ", ")
}

// appendAt returns at with a name or index added, never sharing at's
// array; a quick check locates nothing.
func (c checker) appendAt(at []string, tok any) []string {
	if c.quick {
		return nil
	}
	return append(at[:len(at):len(at)], fmt.Sprint(tok))
}

// names yields obj's names, sorted for a full check's messages.
func (c checker) names(obj map[string]any) iter.Seq[string] {
	if c.quick {
		return maps.Keys(obj)
	}
	return slices.Values(slices.Sorted(maps.Keys(obj)))
}
