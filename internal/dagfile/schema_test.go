package dagfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	schemakind "github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/weirflow/weir/internal/core"
)

func TestSchemaPublishedCopy(t *testing.T) {
	t.Parallel()
	published, err := os.ReadFile("../../docs/dag-file.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(published, Schema) {
		t.Fatal("docs/dag-file.schema.json differs from internal/dagfile/schema.json; copy it over")
	}
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("compile schema: %v", err)
	}
	return s
}

// yamlDocs returns the documents of a YAML file as JSON values.
func yamlDocs(t *testing.T, file string) []any {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	docs, p := parseYAML(src)
	if p != nil {
		t.Fatalf("%s: %s", file, p)
	}
	var out []any
	for _, n := range docs {
		d := &decoder{locs: map[string]fieldLoc{}, budget: maxValueNodes}
		v, _ := d.toAny(n, field{})
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		j, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, j)
	}
	return out
}

func TestExamplesMatchSchema(t *testing.T) {
	t.Parallel()
	s := compileSchema(t)
	for _, file := range exampleFiles(t) {
		for i, doc := range yamlDocs(t, file) {
			if err := s.Validate(doc); err != nil {
				t.Errorf("%s document %d: %v", file, i+1, err)
			}
		}
	}
}

func TestSchemaRejectsBadFields(t *testing.T) {
	t.Parallel()
	s := compileSchema(t)
	for _, file := range []string{"testdata/bad/unknown_field.yaml", "testdata/bad/other_operator_field.yaml",
		"testdata/bad/negative_retries.yaml", "testdata/bad/bad_trigger_rule.yaml", "testdata/bad/bad_ids.yaml"} {
		for _, doc := range yamlDocs(t, file) {
			if err := s.Validate(doc); err == nil {
				t.Errorf("%s: schema accepts it", file)
			}
		}
	}
}

// TestSchemaCoversLoader checks that every field the loader accepts is in
// the schema, and nothing more.
func TestSchemaCoversLoader(t *testing.T) {
	t.Parallel()
	var raw struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       struct {
			Task struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"task"`
			DefaultArgs struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"defaultArgs"`
			TaskFields struct {
				Operator    struct{ Enum []string } `json:"operator"`
				TriggerRule struct{ Enum []string } `json:"trigger_rule"`
			} `json:"taskFields"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(Schema, &raw); err != nil {
		t.Fatal(err)
	}
	same := func(what string, schema map[string]json.RawMessage, loader []string) {
		var keys []string
		for k := range schema {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		loader = slices.Clone(loader)
		sort.Strings(loader)
		if !slices.Equal(keys, loader) {
			t.Errorf("%s: schema has %v, loader accepts %v", what, keys, loader)
		}
	}
	same("DAG fields", raw.Properties, dagFields)
	same("task fields", raw.Defs.Task.Properties, append(slices.Clone(taskFields), allArgNames()...))
	same("default_args fields", raw.Defs.DefaultArgs.Properties, defaultArgFields())
	ops := slices.Sorted(slices.Values(raw.Defs.TaskFields.Operator.Enum))
	if !slices.Equal(ops, operatorNames()) {
		t.Errorf("operators: schema %v, loader %v", ops, operatorNames())
	}
	var rules []string
	for _, r := range core.AllTriggerRules {
		rules = append(rules, string(r))
	}
	if !slices.Equal(raw.Defs.TaskFields.TriggerRule.Enum, rules) {
		t.Errorf("trigger rules: schema %v, core %v", raw.Defs.TaskFields.TriggerRule.Enum, rules)
	}
}

// TestSchemaRulesAgreeWithJSONSchema checks Weir's own schema validator
// against a general JSON Schema validator on every example and test file
// and on thousands of variations of them (a field removed, added or given
// a value of another type or shape): both accept the same documents, and
// report the same violations.
func TestSchemaRulesAgreeWithJSONSchema(t *testing.T) {
	t.Parallel()
	oracle := compileSchema(t)
	ours, err := compileRules(Schema)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var variants []any
	for _, file := range append(exampleFiles(t), files...) {
		for _, doc := range jsonDocs(t, file) {
			variants = append(variants, doc)
			if !strings.Contains(file, "/bad/") { // the bad files' variations add nothing but time
				variants = append(variants, mutations(doc)...)
			}
		}
	}
	accepted := 0
	for i, doc := range variants {
		want := oracleViolations(oracle.Validate(doc))
		got := []string{}
		for _, v := range (checker{}).check(ours, doc, nil) {
			got = append(got, violationString(v.at, v.msg()))
		}
		if ours.matches(doc) != (len(got) == 0) {
			t.Fatalf("variant %d: the quick check and the full one disagree", i)
		}
		sort.Strings(got)
		if !slices.Equal(got, want) {
			b, _ := json.Marshal(doc)
			t.Fatalf("variant %d %s:\nours   %q\noracle %q", i, b, got, want)
		}
		if len(got) == 0 {
			accepted++
		}
	}
	t.Logf("%d documents, %d accepted", len(variants), accepted)
	if accepted == 0 || accepted == len(variants) {
		t.Fatalf("%d of %d accepted: the variations test nothing", accepted, len(variants))
	}
}

// jsonDocs returns the documents of a YAML file as the schema pass sees
// them (none when the file does not parse).
func jsonDocs(t *testing.T, file string) []any {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	nodes, _ := parseYAML(src)
	var out []any
	for _, n := range nodes {
		d := &decoder{locs: map[string]fieldLoc{}, budget: maxValueNodes}
		if v, ok := d.toAny(n, field{}); ok {
			j, err := jsonValue(v)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, j)
		}
	}
	return out
}

// violationString is "/instance/location: message", without the location
// of a bad property name: jsonschema v6.0.3 gives such an error the
// location of whatever object it validated last (its causes, that of the
// name itself); ours is the object's.
// jsonschema lists additional properties in map order; ours are sorted.
func violationString(at []string, msg string) string {
	if strings.HasPrefix(msg, "invalid propertyName ") {
		return msg
	}
	if names, ok := strings.CutPrefix(msg, "additional properties "); ok {
		list := strings.Split(strings.TrimSuffix(names, " not allowed"), ", ")
		sort.Strings(list)
		msg = "additional properties " + strings.Join(list, ", ") + " not allowed"
	}
	return "/" + strings.Join(at, "/") + ": " + msg
}

// oracleViolations lists the innermost causes of a jsonschema error as
// violationString does, sorted; a bad property name is one cause.
func oracleViolations(err error) []string {
	out := []string{}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return out
	}
	p := message.NewPrinter(language.English)
	var leaves func(ve *jsonschema.ValidationError) []*jsonschema.ValidationError
	leaves = func(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
		if _, name := ve.ErrorKind.(*schemakind.PropertyNames); name || len(ve.Causes) == 0 {
			return []*jsonschema.ValidationError{ve}
		}
		var out []*jsonschema.ValidationError
		for _, c := range ve.Causes {
			out = append(out, leaves(c)...)
		}
		return out
	}
	for _, leaf := range leaves(ve) {
		out = append(out, violationString(leaf.InstanceLocation, leaf.ErrorKind.LocalizedString(p)))
	}
	sort.Strings(out)
	return out
}

// mutations returns copies of doc, each with one change somewhere in it.
func mutations(doc any) []any {
	values := []any{nil, true, json.Number("-1"), json.Number("2.0"), "", "x y", "10s", []any{"a"}, map[string]any{"x": "y"}}
	var out []any
	var walk func(v any, set func(any) any)
	walk = func(v any, set func(any) any) {
		for _, nv := range values {
			out = append(out, set(nv))
		}
		switch v := v.(type) {
		case map[string]any:
			out = append(out, set(withKey(v, "unknown_field", "x")))
			for _, k := range slices.Sorted(maps.Keys(v)) {
				out = append(out, set(withoutKey(v, k)))
				walk(v[k], func(nv any) any { return set(withKey(v, k, nv)) })
			}
		case []any:
			for i := range v {
				walk(v[i], func(nv any) any {
					c := slices.Clone(v)
					c[i] = nv
					return set(c)
				})
			}
		}
	}
	walk(doc, func(v any) any { return v })
	return out
}

func withKey(m map[string]any, k string, v any) map[string]any {
	c := maps.Clone(m)
	c[k] = v
	return c
}

func withoutKey(m map[string]any, k string) map[string]any {
	c := maps.Clone(m)
	delete(c, k)
	return c
}

// A keyword the validator does not implement is refused, never ignored.
func TestSchemaRulesRefuseUnknownKeywords(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		`{"type": "object", "properties": {"retries": {"type": "integer", "maximum": 10}}}`,
		`{"$ref": "other.json#/x"}`,
		`{"$ref": "#/$defs/missing"}`,
	} {
		if _, err := compileRules([]byte(src)); err == nil {
			t.Errorf("%s compiled", src)
		} else {
			t.Log(err)
		}
	}
	if _, err := compileRules([]byte(`{"$defs": {"n": {"type": "integer", "minimum": 0}}, "items": {"$ref": "#/$defs/n"}}`)); err != nil {
		t.Error(err)
	}
}
