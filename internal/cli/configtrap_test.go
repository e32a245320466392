package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/testutil/pgtest"
)

// weir runs the CLI with env and returns its exit code and output.
func weir(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut strings.Builder
	code = cli.Run(t.Context(), args, cli.Options{Stdout: &out, Stderr: &errOut, Environ: env})
	return code, out.String(), errOut.String()
}

// `weir db migrate` with the database in the environment creates a home
// whose weir.toml names no other database; a role whose weir.toml and
// environment name different databases refuses to start, naming both, and
// creates nothing (issue 15, configuration correctness).
func TestDatabaseFromEnvironmentIsNotContradicted(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	pgHome := t.TempDir()
	if code, _, stderr := weir(t, []string{"WEIR__DATABASE__CONN=" + dsn}, "db", "migrate", "--home", pgHome); code != 0 {
		t.Fatalf("db migrate on PostgreSQL: exit %d: %s", code, stderr)
	}
	toml, err := os.ReadFile(filepath.Join(pgHome, "weir.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(toml), "conn = ") {
		t.Errorf("weir.toml written by db migrate under WEIR__DATABASE__CONN names a database:\n%s", toml)
	}

	sqliteHome := t.TempDir()
	if code, _, stderr := weir(t, nil, "db", "migrate", "--home", sqliteHome); code != 0 {
		t.Fatalf("db migrate on SQLite: exit %d: %s", code, stderr)
	}
	before, err := os.ReadFile(filepath.Join(sqliteHome, "weir.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"scheduler"}, {"api-server"}, {"standalone", "--port", "0"}, {"dags", "list"}} {
		code, _, stderr := weir(t, []string{"WEIR__DATABASE__CONN=" + dsn}, append(args, "--home", sqliteHome)...)
		if code == 0 || !strings.Contains(stderr, "the database is ambiguous") || !strings.Contains(stderr, "WEIR__DATABASE__CONN") {
			t.Errorf("weir %s with a PostgreSQL conn over a SQLite home: exit %d, stderr %q; want a refusal naming both", strings.Join(args, " "), code, stderr)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(sqliteHome, "weir.toml")); string(after) != string(before) {
		t.Errorf("a refused command changed weir.toml:\n%s", after)
	}
}
