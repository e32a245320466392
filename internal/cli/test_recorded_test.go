package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/cli"
)

// A second `weir dags test` in a home reuses what the first parsed
// (docs/dag-files.md#parsing-once) and answers exactly as the first: the
// same error for a DAG whose file is invalid or broken and for a dag_id
// another file took, the same run for a good DAG.
func TestDagsTestAnswersAlikeFromRecordedParses(t *testing.T) {
	t.Parallel()
	home, dags := t.TempDir(), t.TempDir()
	files := map[string]string{
		"a_good.yaml":  "dag_id: good\nschedule: null\ntasks:\n  - task_id: hello\n    operator: bash\n    bash_command: echo hello\n",
		"b_dup.yaml":   "dag_id: good\ntasks:\n  - task_id: t\n    operator: noop\n---\ndag_id: other\ntasks:\n  - task_id: t\n    operator: noop\n",
		"c_bad.yaml":   "dag_id: bad\nschedule: null\ntasks:\n  - task_id: t\n    operator: bash\n    bash_command: echo fine\n",
		"d_broken.yml": "dag_id: broken\ntasks: [",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dags, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := cli.Run(t.Context(), append(args, "--dags", dags), cli.Options{Stdout: &out, Stderr: &errOut,
			Environ: []string{"WEIR_HOME=" + home, "USER=tester"}})
		return code, out.String(), errOut.String()
	}
	// bad runs once, then its file turns invalid: a test names the file's
	// problem.
	if code, out, errOut := run("dags", "test", "bad"); code != 0 {
		t.Fatalf("dags test bad (still valid): exit %d\n%s\n%s", code, out, errOut)
	}
	invalid := strings.Replace(files["c_bad.yaml"], "    bash_command", "    retries: -1\n    bash_command", 1)
	if err := os.WriteFile(filepath.Join(dags, "c_bad.yaml"), []byte(invalid), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"bad", "other", "broken"} {
		code1, _, err1 := run("dags", "test", id)
		code2, _, err2 := run("dags", "test", id)
		last := func(s string) string { // the error, after the log lines
			lines := strings.Split(strings.TrimSpace(s), "\n")
			return lines[len(lines)-1]
		}
		if id == "bad" && !strings.Contains(err1, "retries") {
			t.Errorf("dags test bad: the error does not name the file's problem:\n%s", err1)
		}
		if code1 == 0 || code1 != code2 || last(err1) != last(err2) {
			t.Errorf("dags test %s: exit %d then %d, error\n%s\nthen\n%s\nwant a failure, the same twice", id, code1, code2, last(err1), last(err2))
		}
	}
	for range 2 {
		code, out, errOut := run("dags", "test", "good")
		if code != 0 || !strings.Contains(out, "hello | hello\n") || !strings.Contains(out, "of good: success") {
			t.Errorf("dags test good: exit %d\n%s\n%s", code, out, errOut)
		}
	}
}
