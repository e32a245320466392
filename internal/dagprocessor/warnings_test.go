package dagprocessor

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/store"
)

// TestWarningUnquotedTriggerData: a bash_command that prints a param
// unquoted loads and gets a DAG warning (not an import error), which goes
// away once the command reads the param from the environment.
func TestWarningUnquotedTriggerData(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	path := filepath.Join(dir, "greet.yaml")
	write(t, path, dagYAML("greet", `echo "Hello, {{ .params.name }}"`))
	syncOnce(t, p)
	if dagState(t, p, "greet") == nil {
		t.Fatal("a DAG with a warning did not load")
	}
	if errs := importErrors(t, p); len(errs) != 0 {
		t.Errorf("import errors %v, want none: a warning is not an error", errs)
	}
	warnings := func() []string {
		l, err := storeOf(p).DagWarningList(t.Context(), &store.DagWarningListParams{DagID: "greet"})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, w := range l {
			out = append(out, w.WarningType+": "+w.Message)
		}
		return out
	}
	if w := warnings(); len(w) != 1 || !strings.Contains(w[0], "unquoted trigger data: task \"t\"") ||
		!strings.Contains(w[0], "{{.params.name}} at line 1, column 17") {
		t.Errorf("warnings %q, want one naming task t and {{.params.name}}", w)
	}
	write(t, path, dagYAML("greet", `echo "Hello, $WEIR_PARAM_NAME"`))
	syncOnce(t, p)
	if w := warnings(); len(w) != 0 {
		t.Errorf("warnings after the fix: %q, want none", w)
	}
}
