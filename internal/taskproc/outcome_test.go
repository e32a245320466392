package taskproc

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// outcomesEnv makes the test binary act as a worker that records the
// outcomes of outcomeCases in the folder it names, then dies unreported.
const outcomesEnv = "TASKPROC_TEST_OUTCOMES_DIR"

// outcomeCases are the tries a dead worker left: their recorded state and
// what their shell wrote to the exit file ("-" = no file).
var outcomeCases = []struct {
	ti, state, exit string
}{
	{ti: "reported-success", state: "success", exit: "-"},
	{ti: "reported-failed", state: "failed", exit: "-"},
	{ti: "pending-exit-0", state: "", exit: "0\n"},
	{ti: "pending-exit-1", state: "", exit: "1\n"},
	{ti: "pending-killed", state: "", exit: "-"},
}

// recordOutcomes records outcomeCases in dir; a failure goes to dir/error.
func recordOutcomes(dir string) int {
	l, err := OpenLedger(dir)
	for _, c := range outcomeCases {
		if err != nil {
			break
		}
		o := Outcome{TIID: c.ti, TryNumber: 2, State: c.state, Token: "token-" + c.ti}
		if c.state == "" {
			o.ExitFile = l.ExitFile(c.ti, 2)
		}
		if _, err = l.Record(o); err == nil && c.exit != "-" {
			err = os.WriteFile(o.ExitFile, []byte(c.exit), 0o600)
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
	if left := inUse(t, dir); !slices.Equal(left, []string{"live-1.outcome"}) {
		t.Errorf("files left: %q, want only the live worker's record", left)
	}
	if again, err := next.Unreported(); err != nil || len(again) != 0 {
		t.Errorf("Unreported after Forget = %+v, %v; want nothing", again, err)
	}
}

// inUse lists the files of dir but spares, by name.
func inUse(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), spareExt) {
			names = append(names, e.Name())
		}
	}
	return names
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
