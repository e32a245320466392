package dagfile

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"
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
