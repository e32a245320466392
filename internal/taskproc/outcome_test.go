package taskproc

import (
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// outcomesEnv makes the test binary act as a worker that records the
// outcomes of outcomeCases in the folder it names, then dies unreported.
const outcomesEnv = "TASKPROC_TEST_OUTCOMES_DIR"

// outcomeCases are the tries a dead worker left: their recorded state and
// the status their shell exited with ("-" = none: killed, or not started).
var outcomeCases = []struct {
	ti, state, exit string
}{
	{ti: "reported-success", state: "success", exit: "-"},
	{ti: "reported-failed", state: "failed", exit: "-"},
	{ti: "pending-exit-0", state: "", exit: "0"},
	{ti: "pending-exit-1", state: "", exit: "1"},
	{ti: "pending-killed", state: "", exit: "-"},
}

// recordOutcomes records outcomeCases in dir, the pending ones' shells
// exiting through their exit trap; a failure goes to dir/error.
func recordOutcomes(dir string) int {
	l, err := OpenLedger(dir)
	for _, c := range outcomeCases {
		if err != nil {
			break
		}
		var o Outcome
		o, err = l.Record(Outcome{TIID: c.ti, TryNumber: 2, State: c.state, Token: "token-" + c.ti})
		if err == nil && c.exit != "-" {
			err = exec.Command("bash", "-c", o.ExitTrap()+"exit "+c.exit).Run() //nolint:gosec // the test's own command
			if exitErr := (*exec.ExitError)(nil); errors.As(err, &exitErr) && strconv.Itoa(exitErr.ExitCode()) == c.exit {
				err = nil
			}
		}
	}
	return helperExit(dir, err)
}

// A dead worker's outcomes are reported by its next life: those it had
// recorded, and the pending ones whose shell exited 0; a pending try that
// did not exit 0 is forgotten (its retry is right), and the records of a
// live worker stay.
func TestUnreportedOutcomes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if out, err := helper(outcomesEnv, dir).CombinedOutput(); err != nil {
		t.Fatalf("recording worker: %v: %s%s", err, out, helperError(dir))
	}
	live, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := live.Record(Outcome{TIID: "live", TryNumber: 1, State: "success"}); err != nil {
		t.Fatal(err)
	}

	next, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := reportAll(t, next)
	want := []string{"pending-exit-0 success token-pending-exit-0", "reported-failed failed token-reported-failed",
		"reported-success success token-reported-success"}
	if !slices.Equal(got, want) {
		t.Errorf("Unreported = %q, want %q", got, want)
	}
	wantLeft := []string{filepath.Base(live.path()), filepath.Base(next.path())}
	if left := journals(t, dir); !slices.Equal(left, slices.Sorted(slices.Values(wantLeft))) {
		t.Errorf("journals left: %q, want only the live workers'", left)
	}
	if h := held(t, dir); len(h.outcomes) != 1 || h.outcomes["live-1"].State != "success" {
		t.Errorf("the folder holds %+v, want the live worker's outcome alone", h.outcomes)
	}
	if again, err := next.Unreported(); err != nil || len(again) != 0 {
		t.Errorf("Unreported after Forget = %+v, %v; want nothing", again, err)
	}
}

// reportAll forgets, as a worker does once they are reported, the
// outcomes l.Unreported returns, and returns them as sorted
// "ti state token" lines.
func reportAll(t *testing.T, l *Ledger) []string {
	t.Helper()
	outs, err := l.Unreported()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range outs {
		got = append(got, o.TIID+" "+o.State+" "+o.Token)
		l.Forget(o)
	}
	slices.Sort(got)
	return got
}
