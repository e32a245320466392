package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `weir dags list-import-errors --dags FOLDER` parses that folder now and
// lists its files that fail to load, recording nothing; without --dags it
// lists what the deployment's processor recorded (here: nothing yet).
func TestListImportErrorsOfAFolder(t *testing.T) {
	t.Parallel()
	home, dags := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dags, "broken.yaml"), []byte("dag_id: x\ntasks: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dags, "ok.yaml"), []byte("dag_id: ok\ntasks:\n  - task_id: a\n    operator: bash\n    bash_command: echo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := weir(t, nil, "db", "migrate", "--home", home); code != 0 {
		t.Fatalf("db migrate: %d %s", code, stderr)
	}
	code, out, stderr := weir(t, nil, "dags", "list-import-errors", "--home", home, "--dags", dags)
	if code != 0 || !strings.Contains(out, "broken.yaml:2:") || strings.Contains(out, "ok.yaml") {
		t.Fatalf("list-import-errors --dags: exit %d\n%s%s\nwant broken.yaml's error alone", code, out, stderr)
	}
	if code, out, _ := weir(t, nil, "dags", "list-import-errors", "--home", home); code != 0 || !strings.Contains(out, "no import errors") {
		t.Errorf("list-import-errors of the deployment after a folder's check: exit %d %s; want none recorded", code, out)
	}
	if code, out, _ := weir(t, nil, "dags", "list", "--home", home, "-o", "plain"); code != 0 || out != "" {
		t.Errorf("dags list after a folder's check: exit %d %q; want no DAG recorded", code, out)
	}
}
