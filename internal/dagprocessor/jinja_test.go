package dagprocessor

import (
	"path/filepath"
	"strings"
	"testing"
)

// A misspelt name in a Jinja template is an import error at the field's
// line and column, with a suggestion; the fixed file loads.
func TestJinjaTypoIsImportError(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	path := filepath.Join(dir, "etl.yaml")
	write(t, path, dagYAML("etl", `echo "{{ parms.region }} {{ ds }}"`))
	syncOnce(t, p)
	want := path + `:5:19: tasks[0].bash_command: unknown name parms in the template (did you mean "params"?)`
	if errs := importErrors(t, p); !strings.Contains(errs[path], want) {
		t.Fatalf("import errors = %v, want %q", errs, want)
	}
	if d := dagState(t, p, "etl"); d != nil {
		t.Fatalf("etl loaded despite the typo: %+v", d)
	}
	write(t, path, dagYAML("etl", `echo "{{ params.region | default('eu') }} {{ macros.ds_add(ds, 1) }}"`))
	syncOnce(t, p)
	if errs := importErrors(t, p); len(errs) != 0 {
		t.Fatalf("import errors after the fix = %v", errs)
	}
	if d := dagState(t, p, "etl"); d == nil || !d.IsActive {
		t.Fatalf("etl after the fix: %+v", d)
	}
}
