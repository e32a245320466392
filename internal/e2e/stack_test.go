package e2e

import (
	"path/filepath"
	"testing"

	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// standalone is a running `weir standalone` and an API client logged in as
// admin.
type standalone struct {
	*proc
	home string
	api  *client
}

// startStandalone runs `weir standalone` on home with DAGs from dags, on a
// free port, and waits until it is healthy and admin has logged in.
func startStandalone(t *testing.T, home, dags string, env ...string) *standalone {
	t.Helper()
	s := weirtest.StartStandalone(t, weirBin, home, dags, env...)
	return &standalone{proc: s.Proc, home: s.Home, api: &client{s.API}}
}

// examplesDir is the repository's examples/dags folder.
func examplesDir() string { return filepath.Join(repoRoot, "examples", "dags") }

func readFile(t *testing.T, path string) string { t.Helper(); return weirtest.ReadFile(t, path) }

func writeFile(t *testing.T, path, content string) { t.Helper(); weirtest.WriteFile(t, path, content) }

// onEachEngine runs fn as a parallel subtest per engine standalone can use:
// SQLite (env empty) and PostgreSQL (env naming a fresh database).
func onEachEngine(t *testing.T, fn func(t *testing.T, env []string)) {
	t.Helper()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			var env []string
			if engine == "postgres" {
				env = append(env, "WEIR__DATABASE__CONN="+pgtest.DSN(t))
			}
			fn(t, env)
		})
	}
}
