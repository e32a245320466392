// Package weirtest drives the built weir binary for end-to-end and
// fault-injection tests: it builds the binary once, starts its roles as
// processes in their own process groups, runs short CLI commands, polls
// for conditions and calls the REST API as a user would.
package weirtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// WaitLong bounds every wait for the product to do something: generous,
// because the machine is shared and slow; a passing test never waits it out.
const WaitLong = 90 * time.Second

// FastSettings make the scheduler and workers react quickly in tests, and
// let a test trigger the DAGs it writes without unpausing them first (new
// DAGs start paused by default, as in Airflow; a test of that default
// passes Unset(PausedAtCreation)).
var FastSettings = []string{
	"WEIR__SCHEDULER__POLL_INTERVAL=200ms",
	"WEIR__SCHEDULER__DAG_DIR_LIST_INTERVAL=500ms",
	"WEIR__WORKERS__HEARTBEAT_INTERVAL=1s",
	PausedAtCreation + "=false",
}

// PausedAtCreation is the variable of [core] dags_are_paused_at_creation,
// which FastSettings sets to false.
const PausedAtCreation = "WEIR__CORE__DAGS_ARE_PAUSED_AT_CREATION"

// unsetPrefix marks an entry of Env's extra that removes a variable.
const unsetPrefix = "\x00unset:"

// Unset is an entry of Env's extra (or of any env a process of this package
// starts with) that removes the variable name set before it, such as one of
// FastSettings, so the process sees the product's default.
func Unset(name string) string { return unsetPrefix + name }

// Build builds ./cmd/weir of the module rooted at root into a new temporary
// folder and returns the binary's path and a function removing the folder.
func Build(root string) (bin string, cleanup func(), err error) {
	return BuildPackage(root, "./cmd/weir")
}

// BuildPackage builds the program pkg (such as "./examples/sdk", a weir
// binary with Go-defined DAGs and trigger types) of the module rooted at
// root as Build does: a static binary, as `make build` builds weir.
func BuildPackage(root, pkg string) (bin string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "weir-test-bin-")
	if err != nil {
		return "", nil, err
	}
	bin = filepath.Join(dir, "weir")
	build := exec.Command("go", "build", "-o", bin, pkg)
	build.Dir = root
	if os.Getenv("CGO_ENABLED") == "" && !strings.Contains(os.Getenv("GOFLAGS"), "-race") {
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as `make build` ships it (-race needs cgo)
	}
	if out, err := build.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return bin, func() { _ = os.RemoveAll(dir) }, nil
}

// Env is the test's environment without any WEIR_* variable of the caller,
// plus FastSettings, plus extra (later entries win; an Unset(name) entry
// removes name as set before it).
func Env(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WEIR_") {
			env = append(env, kv)
		}
	}
	env = append(env, FastSettings...)
	for _, kv := range extra {
		name, ok := strings.CutPrefix(kv, unsetPrefix)
		if !ok {
			env = append(env, kv)
			continue
		}
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") })
	}
	return env
}
