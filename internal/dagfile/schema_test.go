package dagfile

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"sort"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
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
