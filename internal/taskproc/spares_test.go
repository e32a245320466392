package taskproc

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// crashEnv makes the test binary act as a worker that runs two bash tries
// (crashTry) in the folder it names and SIGKILLs itself at the given step
// of its ledger: "DIR:STEP".
const crashEnv = "TASKPROC_TEST_CRASH_AT"

// crashTry runs one bash try's file work as the worker does: the pending
// outcome (record and exit file), the group's record, the shell writing
// exit status 0 (once told, so that a kill before decides nothing), the
// group's end, the final outcome, and the report's answer.
func crashTry(l *Ledger, ti string) error {
	o := Outcome{TIID: ti, TryNumber: 1, ExitFile: l.ExitFile(ti, 1), Token: "token-" + ti}
	if _, err := l.Record(o); err != nil {
		return err
	}
	cmd := exec.Command("bash", "-c", `read -r _; echo 0 1<> "$1"`, "task", o.ExitFile) //nolint:gosec // the test's own command
	tell, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	g, err := Start(cmd, l)
	if err != nil {
		return err
	}
	_, _ = tell.Write([]byte("go\n"))
	err = cmd.Wait()
	g.Close()
	if err != nil {
		return err
	}
	o.State = "success"
	reported, err := l.Record(o)
	if err != nil {
		return err
	}
	reported()
	return nil
}

// crashingWorker runs crashTry twice in dir, killed at step n (counting
// from 1) of its ledger; a failure goes to dir/error.
func crashingWorker(arg string) int {
	dir, n, _ := strings.Cut(arg, ":")
	at, err := strconv.Atoi(n)
	var l *Ledger
	if err == nil {
		l, err = OpenLedger(dir)
	}
	if err == nil {
		steps := 0
		l.crashAt = func(string) {
			if steps++; steps == at {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
		}
		for _, ti := range []string{"first", "second"} {
			if err = crashTry(l, ti); err != nil {
				break
			}
		}
	}
	return helperExit(dir, err)
}

// A worker killed between any two steps of its record keeping leaves a
// folder its next life reads right: a try is reported (once, success)
// exactly when its shell had exited 0 and the report was not yet answered;
// a try killed earlier is not, even though its files reuse the inodes of
// the previous try's (an exit file that held 0 included). The next life
// adopts the spares: no record is left over and the folder does not grow.
func TestCrashBetweenSteps(t *testing.T) {
	t.Parallel()
	// Steps per try: pending record (filled, placed), its exit file
	// (filled, placed), group record (filled, placed), group retired,
	// final record (filled, exchanged), exit file and record retired.
	const perTry = 11
	reportedAt := func(step int) string { // the try the next life must report
		switch s := (step-1)%perTry + 1; {
		case s >= 7 && s <= 10: // the shell exited 0, the record is still there
			return []string{"first", "second"}[(step-1)/perTry]
		default:
			return ""
		}
	}
	for step := 1; step <= 2*perTry+1; step++ { // the last one: no crash
		t.Run(fmt.Sprint(step), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			err := helper(crashEnv, dir+":"+strconv.Itoa(step)).Run()
			if e := helperError(dir); e != "" {
				t.Fatalf("worker failed: %s", e)
			}
			if killed := err != nil; killed != (step <= 2*perTry) {
				t.Fatalf("worker ended with %v at step %d", err, step)
			}

			next, err := OpenLedger(dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := KillLeftovers(dir); err != nil {
				t.Fatal(err)
			}
			got := reportAll(t, next)
			var want []string
			if ti := reportedAt(step); ti != "" {
				want = []string{ti + " success token-" + ti}
			}
			if !slices.Equal(got, want) {
				t.Errorf("reported %q, want %q", got, want)
			}
			if left := inUse(t, dir); len(left) != 0 {
				t.Errorf("files left in use: %q", left)
			}
			// The next life's tries reuse the files: at most four were
			// ever needed at once (three records, one spare).
			if err := crashTry(next, "third"); err != nil {
				t.Fatal(err)
			}
			if all, _ := os.ReadDir(dir); len(all) > 4 || len(inUse(t, dir)) != 0 {
				t.Errorf("folder after another try: %d files, %q in use; want at most 4 spares", len(all), inUse(t, dir))
			}
		})
	}
}
