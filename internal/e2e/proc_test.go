package e2e

import (
	"testing"

	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// proc is a long-running weir process (a role) started by a test.
type proc = weirtest.Proc

// result is the outcome of a short weir command.
type result = weirtest.Result

// startProc starts `weir args...` with env added to the test environment.
func startProc(t *testing.T, name string, env []string, args ...string) *proc {
	t.Helper()
	return weirtest.StartProc(t, weirBin, name, env, args...)
}

// runWeir runs a short weir command to completion.
func runWeir(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return weirtest.Run(t, weirBin, env, args...)
}

// mustWeir runs a weir command that must succeed and returns its stdout.
func mustWeir(t *testing.T, env []string, args ...string) string {
	t.Helper()
	return weirtest.MustRun(t, weirBin, env, args...)
}

// waitFor polls cond until it reports true, failing t after weirtest.WaitLong with
// the last status cond gave.
func waitFor(t testing.TB, what string, cond func() (ok bool, status string)) {
	t.Helper()
	weirtest.WaitFor(t, what, cond)
}
