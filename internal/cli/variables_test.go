package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/cli"
)

// docs/variables.md#cli: set (with --json and a description that a later
// set keeps), get (--json, --default, a missing key failing), list without
// values, export and import round-trip, delete.
func TestVariablesCLI(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := []string{"WEIR_HOME=" + home, "USER=tester"}
	run := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := cli.Run(t.Context(), args, cli.Options{Stdout: &out, Stderr: &errOut, Environ: env})
		return out.String(), errOut.String(), code
	}
	must := func(args ...string) string {
		t.Helper()
		out, errOut, code := run(args...)
		if code != 0 {
			t.Fatalf("weir %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		return out
	}
	must("db", "migrate")
	must("variables", "set", "thresholds", `{"rows": 1000}`, "--json", "--description", "alert limits")
	must("variables", "set", "api_password", "hunter2")
	must("variables", "set", "thresholds", `{"rows":5}`)
	if got := must("variables", "get", "thresholds", "--json"); got != "{\n  \"rows\": 5\n}\n" {
		t.Errorf("get --json = %q", got)
	}
	if got := must("variables", "list"); !strings.Contains(got, "thresholds    alert limits") || strings.Contains(got, "hunter2") {
		t.Errorf("list = %q, want keys with the kept description and no values", got)
	}
	if got := must("variables", "get", "nope", "--default", "none"); got != "none\n" {
		t.Errorf("get with a default = %q", got)
	}
	if _, errOut, code := run("variables", "get", "nope"); code == 0 || !strings.Contains(errOut, `variable "nope" does not exist`) {
		t.Errorf("get of a missing key: exit %d, %q", code, errOut)
	}
	if _, errOut, code := run("variables", "set", "bad", "{", "--json"); code == 0 || !strings.Contains(errOut, "is not JSON") {
		t.Errorf("set --json of bad JSON: exit %d, %q", code, errOut)
	}

	file := filepath.Join(t.TempDir(), "vars.json")
	must("variables", "export", file)
	raw, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(raw), `"rows": 5`) || !strings.Contains(string(raw), `"api_password": "hunter2"`) {
		t.Fatalf("export = %s (%v)", raw, err)
	}
	must("variables", "delete", "thresholds")
	if _, _, code := run("variables", "get", "thresholds"); code == 0 {
		t.Fatal("get after delete succeeded")
	}
	if got := must("variables", "import", file); got != "2 variables imported\n" {
		t.Errorf("import = %q", got)
	}
	if got := must("variables", "get", "thresholds"); got != "{\"rows\":5}\n" {
		t.Errorf("after import: %q", got)
	}
}
