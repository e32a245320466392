package weir_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// docs/go-sdk.md#using-the-sdk-from-your-own-module, literally: a program in
// another module requires the SDK through a replace directive to this
// checkout (the module is not published), builds, and its binary runs its
// Go DAG with `dags test`.
func TestSDKFromAnotherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	t.Parallel()
	dir := t.TempDir()
	bin := buildModule(t, dir, `package main

import (
	"context"

	"github.com/weirflow/weir"
)

func main() {
	dag := weir.NewDAG("hello_module")
	dag.Go("greet", func(ctx context.Context, tc *weir.TaskContext) (any, error) {
		return "greeted", nil
	})
	weir.Main(dag)
}
`)
	cmd := exec.CommandContext(t.Context(), bin, "dags", "test", "hello_module", "--home", filepath.Join(dir, "home"))
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if err != nil {
		t.Fatalf("dags test: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^greet\s+-1\s+success\s+1`).MatchString(out) || !regexp.MustCompile(`of hello_module: success`).MatchString(out) {
		t.Errorf("dags test of the other module's DAG:\n%s\nwant greet succeeded and the run succeeded", out)
	}
}

// buildModule writes mainGo as the program of a new module in dir that
// requires the SDK through a replace directive to this checkout, with the
// commands docs/go-sdk.md gives, builds it and returns the binary.
func buildModule(t *testing.T, dir, mainGo string) string {
	t.Helper()
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("main.go", mainGo)
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run("go", "mod", "init", "example.com/mydags")
	run("go", "mod", "edit", "-require", "github.com/weirflow/weir@v0.0.0", "-replace", "github.com/weirflow/weir="+root)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", string(sum))
	run("go", "mod", "tidy")
	run("go", "build", "-o", "mydags", ".")
	return filepath.Join(dir, "mydags")
}
