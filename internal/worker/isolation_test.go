package worker

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/weirflow/weir"

// taskSide are the packages that run on a worker machine: the worker and
// the in-task CLI a task's own process runs. They reach Weir only through
// the Execution API (docs/architecture.md, "Worker ↔ Execution API").
var taskSide = []string{module + "/internal/worker", module + "/internal/taskcli"}

// forbidden are the import paths (each with everything below it) the task
// side must not depend on, with the reason given when one appears.
var forbidden = []struct{ path, why string }{
	{module + "/internal/store", "the metadata store and its engines"},
	{module + "/internal/statestore", "the api-server's state service; the rules are in internal/statevalue"},
	{module + "/internal/api", "the REST API server"},
	{module + "/internal/apiserver", "the api-server role"},
	{module + "/internal/execapi", "the Execution API server; the client is internal/execclient"},
	{module + "/internal/scheduler", "the scheduler"},
	{module + "/internal/dagprocessor", "the DAG processor"},
	{module + "/internal/cli", "the CLI wiring, which links every role"},
	{"modernc.org/sqlite", "a database driver"},
	{"github.com/jackc/pgx", "a database driver"},
	{"github.com/lib/pq", "a database driver"},
}

// TestTaskSideImportsNoStoreOrServer fails, naming the import and the chain
// that brings it in, when the worker or the in-task CLI comes to depend on
// a store, a server package or a database driver: "workers never touch the
// database" is kept by the compiler's import graph, not by convention.
func TestTaskSideImportsNoStoreOrServer(t *testing.T) {
	t.Parallel()
	graph := importGraph(t, taskSide...)
	for _, root := range taskSide {
		if _, ok := graph[root]; !ok {
			t.Fatalf("go list -deps did not list %s", root)
		}
	}
	for _, v := range violations(graph, taskSide) {
		t.Error(v)
	}
}

// TestViolationsNamesTheChain checks the guard itself on a made-up graph:
// a forbidden package reached through others is reported once with the
// chain (not what it imports in turn); a package whose path only starts
// like a forbidden one is not.
func TestViolationsNamesTheChain(t *testing.T) {
	t.Parallel()
	w, ref := module+"/internal/worker", module+"/internal/stateref"
	graph := map[string][]string{
		w:                                   {ref, module + "/internal/storefront", "fmt"},
		ref:                                 {module + "/internal/store/sqlstore"},
		module + "/internal/store/sqlstore": {"modernc.org/sqlite"},
		module + "/internal/storefront":     {"github.com/jackc/pgx/v5/stdlib"},
		"modernc.org/sqlite":                nil,
		"github.com/jackc/pgx/v5/stdlib":    nil,
		"fmt":                               nil,
	}
	got := violations(graph, []string{w})
	want := []string{
		w + " depends on " + module + "/internal/store/sqlstore (the metadata store and its engines): " +
			w + " → " + ref + " → " + module + "/internal/store/sqlstore",
		w + " depends on github.com/jackc/pgx/v5/stdlib (a database driver): " +
			w + " → " + module + "/internal/storefront → github.com/jackc/pgx/v5/stdlib",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("violations =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	graph[w] = []string{"fmt"}
	if got := violations(graph, []string{w}); len(got) != 0 {
		t.Fatalf("clean graph reported %v", got)
	}
}

// importGraph runs go list -deps on roots and returns every package they
// depend on (themselves included) with its direct imports.
func importGraph(t *testing.T, roots ...string) map[string][]string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go") //nolint:staticcheck // the toolchain running this test
	}
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}, roots...)
	cmd := exec.Command(goBin, args...) //nolint:gosec // the go tool with fixed arguments
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	graph := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 {
			graph[f[0]] = f[1:]
		}
	}
	return graph
}

// violations lists, for each root, every forbidden package it reaches in
// graph, with the shortest import chain from the root to it.
func violations(graph map[string][]string, roots []string) []string {
	var out []string
	for _, root := range roots {
		parent := map[string]string{root: ""}
		queue := []string{root}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			if why, bad := forbiddenReason(p); bad {
				out = append(out, fmt.Sprintf("%s depends on %s (%s): %s", root, p, why, chain(parent, p)))
				continue // one report per forbidden package; not what it imports in turn
			}
			for _, imp := range graph[p] {
				if _, seen := parent[imp]; !seen {
					parent[imp] = p
					queue = append(queue, imp)
				}
			}
		}
	}
	return out
}

// forbiddenReason says why path may not be imported, if it may not.
func forbiddenReason(path string) (string, bool) {
	for _, f := range forbidden {
		if path == f.path || strings.HasPrefix(path, f.path+"/") {
			return f.why, true
		}
	}
	return "", false
}

// chain renders the import path from the root to p, following parent.
func chain(parent map[string]string, p string) string {
	var c []string
	for ; p != ""; p = parent[p] {
		c = append(c, p)
	}
	slices.Reverse(c)
	return strings.Join(c, " → ")
}
