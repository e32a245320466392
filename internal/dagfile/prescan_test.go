package dagfile

import (
	"strings"
	"testing"
)

// The nesting pre-scan refuses deep flow and block nesting before the YAML
// parser runs, naming the limit and where it was passed, and leaves alone
// what only looks deep: brackets in strings, comments and block scalars,
// and plain text holding brackets.
func TestPrescan(t *testing.T) {
	t.Parallel()
	deepText := "dag_id: x\ntasks:\n  - task_id: t\n    operator: bash\n    bash_command: |\n"
	for i := range 100 {
		deepText += strings.Repeat(" ", 6+i) + "echo {\n"
	}
	blockMap := ""
	for i := range MaxDepth + 1 {
		blockMap += strings.Repeat(" ", i) + "k:\n"
	}
	pass := map[string]string{
		"brackets in a double-quoted string": `a: "` + strings.Repeat("[", 1000) + `"`,
		"brackets in a single-quoted string": `a: '` + strings.Repeat("{", 500) + `it''s ` + strings.Repeat("[", 500) + `'`,
		"a quoted string over lines":         "a: \"" + strings.Repeat("[", 100) + "\n  " + strings.Repeat("[", 100) + "\"\nb: [1]",
		"brackets in a comment":              "a: 1 # " + strings.Repeat("[", 1000),
		"brackets in plain text":             "a: echo " + strings.Repeat("[", 1000),
		"a deeply indented block scalar":     deepText,
		"flow nesting at the limit":          strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1),
		"nesting closed and opened again":    strings.Repeat("- "+strings.Repeat("[", 40)+strings.Repeat("]", 40)+"\n", 100),
		"a new document resets the depth":    strings.Repeat(blockMap[:len(blockMap)/2]+"---\n", 3),
	}
	for name, src := range pass {
		if p := prescan([]byte(src)); p != nil {
			t.Errorf("%s: refused: %s", name, p)
		}
	}
	refuse := map[string]string{
		"100,000 [":             strings.Repeat("[", 100000),
		"deep { after a key":    "a: " + strings.Repeat("{b: ", 100),
		"deep block mappings":   blockMap,
		"deep block lists":      strings.Repeat("- ", 100) + "x",
		"flow after an anchor":  "a: &x !!seq " + strings.Repeat("[", 100),
		"flow in a list entry":  "- " + strings.Repeat("[", 100),
		"after a document mark": "--- " + strings.Repeat("[", 100),
	}
	for name, src := range refuse {
		p := prescan([]byte(src))
		if p == nil || p.Line == 0 || p.Msg != "nesting deeper than 64 levels, the limit of a DAG file" {
			t.Errorf("%s: %v", name, p)
		}
	}
}
