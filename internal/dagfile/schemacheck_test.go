package dagfile

import (
	"strings"
	"testing"
)

// The schema pass locates what the schema rejects at the offending field.
func TestSchemaProblemsAreLocated(t *testing.T) {
	t.Parallel()
	src := "dag_id: d\ntasks:\n  - task_id: a\n    operator: bash\n    bash_command: x\n    retries: -1\n"
	docs, p := parseYAML([]byte(src))
	if p != nil {
		t.Fatal(p)
	}
	probs := schemaProblems("d.yaml", docs[0])
	if len(probs) == 0 {
		t.Fatal("schema accepted retries: -1")
	}
	got := probs[0].String()
	if !strings.HasPrefix(got, "d.yaml:6:14: tasks[0].retries: does not match the DAG file schema") {
		t.Errorf("problem = %q, want it at d.yaml:6:14 tasks[0].retries", got)
	}
	good := "dag_id: d\ntasks:\n  a:\n    operator: noop\n"
	docs, _ = parseYAML([]byte(good))
	if probs := schemaProblems("d.yaml", docs[0]); len(probs) != 0 {
		t.Errorf("schema rejects a valid file: %v", probs)
	}
}
