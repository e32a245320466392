package template

import (
	"slices"
	"strings"
	"testing"
)

// docs/variables.md#templates: the variables a task's templates read are
// found wherever they stand (nested args, pipelines, if/range/with,
// $-rooted), fetched once each, and rendered as strings or decoded JSON.
func TestVariableRefsAndRendering(t *testing.T) {
	t.Parallel()
	args := map[string]any{
		"bash_command": `echo {{ .var.value.region }} {{ if .var.json.flags.on }}{{ .var.value.region | shquote }}{{ end }}`,
		"headers":      map[string]any{"Authorization": "Bearer {{ $.var.value.api_token }}"},
		"data":         []any{"{{ range .var.json.tables }}{{ . }},{{ end }}", "no template", 7},
		"sql":          "{{ with .params }}{{ .x }}{{ end }}",
	}
	refs := VariableRefs(args)
	if !slices.Equal(refs.Values, []string{"api_token", "region"}) || !slices.Equal(refs.JSONs, []string{"flags", "tables"}) || len(refs.Optional) != 0 {
		t.Fatalf("refs = %+v; want [api_token region], [flags tables], none optional", refs)
	}
	ctx, err := WithVariables(map[string]any{"params": map[string]any{"x": 1}},
		map[string]string{"region": "eu west", "api_token": "t0k"},
		map[string]string{"flags": `{"on": true}`, "tables": `["a", "b"]`})
	if err != nil {
		t.Fatal(err)
	}
	out, err := RenderArgs(args, ctx, Funcs{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out["bash_command"]; got != `echo eu west 'eu west'` {
		t.Errorf("bash_command = %q", got)
	}
	if got := out["headers"].(map[string]any)["Authorization"]; got != "Bearer t0k" {
		t.Errorf("header = %q", got)
	}
	if got := out["data"].([]any)[0]; got != "a,b," {
		t.Errorf("data[0] = %q", got)
	}
	if _, err := WithVariables(map[string]any{}, nil, map[string]string{"bad": "not json"}); err == nil ||
		!strings.Contains(err.Error(), `variable "bad" is read as JSON`) {
		t.Errorf("a non-JSON value read as JSON: %v", err)
	}
}
