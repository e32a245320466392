package dagfile

import (
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// rule is one subschema of Schema, compiled for validation. It implements
// the draft 2020-12 keywords Schema uses, with the semantics of a JSON
// Schema validator (santhosh-tekuri/jsonschema, which the tests compare it
// with); compileRules refuses any other keyword, so the schema cannot use
// one that would be ignored. Compiling the whole schema with a general
// validator took 20-50 ms at every start of a weir process that loads a
// DAG file, and its package initialisation ~9 ms of every weir process.
type rule struct {
	never         bool     // the false schema
	ref           *rule    // $ref (siblings apply too, as in 2020-12)
	types         []string // type
	constant      any      // const, when hasConst
	hasConst      bool
	enum          []any
	minLength     int // minLength; -1 when absent, as the other bounds
	maxLength     int
	pattern       *regexp.Regexp
	minimum       *big.Rat
	minItems      int
	items         *rule
	minProperties int
	properties    map[string]*rule
	additional    *rule // additionalProperties (a false schema for false)
	required      []string
	propertyNames *rule
	allOf         []*rule
	anyOf         []*rule
	oneOf         []*rule
	not           *rule
	ifRule        *rule
	thenRule      *rule
	elseRule      *rule
}

// annotations are the keywords that do not take part in validation.
var annotations = []string{"$schema", "$id", "$defs", "$comment", "title", "description", "default", "examples"}

// ruleCompiler compiles a schema document; refs holds the rules of the
// JSON pointers $ref names, so a recursive reference compiles once.
type ruleCompiler struct {
	doc  any
	refs map[string]*rule
}

// compileRules compiles the schema document src.
func compileRules(src []byte) (*rule, error) {
	var doc any
	if err := json.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	c := &ruleCompiler{doc: doc, refs: map[string]*rule{}}
	return c.compile(doc, "#")
}

func (c *ruleCompiler) compile(v any, at string) (*rule, error) {
	r := newRule()
	return r, c.fill(r, v, at)
}

// newRule returns a rule without bounds.
func newRule() *rule { return &rule{minLength: -1, maxLength: -1, minItems: -1, minProperties: -1} }

// fill compiles the subschema v (at the JSON pointer at, for errors) into r.
func (c *ruleCompiler) fill(r *rule, v any, at string) error {
	if b, ok := v.(bool); ok {
		r.never = !b
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: a schema must be an object or a boolean", at)
	}
	var err error
	sub := func(key string) *rule {
		if _, ok := m[key]; !ok || err != nil {
			return nil
		}
		var s *rule
		s, err = c.compile(m[key], at+"/"+key)
		return s
	}
	list := func(key string) []*rule {
		items, _ := m[key].([]any)
		var out []*rule
		for i, item := range items {
			s, e := c.compile(item, fmt.Sprintf("%s/%s/%d", at, key, i))
			if e != nil && err == nil {
				err = e
			}
			out = append(out, s)
		}
		return out
	}
	count := func(key string) int {
		if n, ok := m[key].(float64); ok {
			return int(n)
		}
		return -1
	}
	for key, val := range m {
		switch key {
		case "$ref":
			r.ref, err = c.resolve(val, at)
		case "type":
			if r.types, err = stringsOf(val, at+"/type"); err == nil {
				slices.SortFunc(r.types, func(a, b string) int { return typeRank(a) - typeRank(b) })
			}
		case "const":
			r.constant, r.hasConst = val, true
		case "enum":
			r.enum, _ = val.([]any)
		case "pattern":
			s, _ := val.(string)
			r.pattern, err = regexp.Compile(s)
		case "minimum":
			r.minimum, _ = new(big.Rat).SetString(fmt.Sprint(val))
		case "required":
			r.required, err = stringsOf(val, at+"/required")
		case "properties":
			props, _ := val.(map[string]any)
			r.properties = map[string]*rule{}
			for name, p := range props {
				if r.properties[name], err = c.compile(p, at+"/properties/"+name); err != nil {
					break
				}
			}
		case "minLength", "maxLength", "minItems", "minProperties", "items", "additionalProperties",
			"propertyNames", "not", "if", "then", "else", "allOf", "anyOf", "oneOf":
			// below
		default:
			if !slices.Contains(annotations, key) {
				return fmt.Errorf("%s: keyword %q is not implemented by Weir's schema validator", at, key)
			}
		}
		if err != nil {
			return err
		}
	}
	r.minLength, r.maxLength, r.minItems, r.minProperties = count("minLength"), count("maxLength"), count("minItems"), count("minProperties")
	r.items, r.additional, r.propertyNames = sub("items"), sub("additionalProperties"), sub("propertyNames")
	r.not, r.ifRule, r.thenRule, r.elseRule = sub("not"), sub("if"), sub("then"), sub("else")
	r.allOf, r.anyOf, r.oneOf = list("allOf"), list("anyOf"), list("oneOf")
	return err
}

// resolve returns the rule of a local reference ("#/$defs/id").
func (c *ruleCompiler) resolve(val any, at string) (*rule, error) {
	ref, _ := val.(string)
	if r, ok := c.refs[ref]; ok {
		return r, nil
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("%s: $ref %q: only references within the schema (#/...) are supported", at, ref)
	}
	target := c.doc
	for tok := range strings.SplitSeq(ref[2:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, _ := target.(map[string]any)
		var ok bool
		if target, ok = m[tok]; !ok {
			return nil, fmt.Errorf("%s: $ref %q names nothing", at, ref)
		}
	}
	r := newRule()
	c.refs[ref] = r // before filling: a recursive reference finds it
	return r, c.fill(r, target, ref)
}

func stringsOf(v any, at string) ([]string, error) {
	if s, ok := v.(string); ok {
		return []string{s}, nil
	}
	items, _ := v.([]any)
	out := make([]string, len(items))
	for i, item := range items {
		s, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("%s: want strings", at)
		}
		out[i] = s
	}
	return out, nil
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

// typeRank orders type names as validators list them in messages.
func typeRank(name string) int {
	return slices.Index([]string{"null", "boolean", "number", "integer", "string", "array", "object"}, name)
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// isInteger reports whether a number has no fractional part (1.0 is an
// integer in JSON Schema).
func isInteger(v any) bool {
	r, ok := new(big.Rat).SetString(fmt.Sprint(v))
	return ok && r.IsInt()
}

// jsonEqual compares JSON values, numbers by value.
func jsonEqual(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, va := range a {
			if vb, ok := b[k]; !ok || !jsonEqual(va, vb) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, jsonEqual)
	case json.Number, float64:
		if jsonType(b) != "number" {
			return false
		}
		x, okx := new(big.Rat).SetString(fmt.Sprint(a))
		y, oky := new(big.Rat).SetString(fmt.Sprint(b))
		return okx && oky && x.Cmp(y) == 0
	default:
		return a == b
	}
}

// quote single-quotes s as the JSON Schema validators' messages do.
func quote(s string) string {
	s = fmt.Sprintf("%q", s)
	s = strings.ReplaceAll(s, `\"`, `"`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s[1:len(s)-1] + "'"
}

func display(v any) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case []any, map[string]any:
		return "value"
	default:
		return fmt.Sprint(v)
	}
}
