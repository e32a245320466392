package taskproc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// crashEnv makes the test binary act as a worker that runs two bash tries
// (crashTry) in the folder it names and SIGKILLs itself at the given step
// of its ledger: "DIR:STEP:COMPACT_AT". Before it dies it writes the try
// its next life must report to DIR/expect; a worker not killed writes how
// many steps it took to DIR/steps.
const crashEnv = "TASKPROC_TEST_CRASH_AT"

// crashTry runs one bash try's ledger work as the worker does: the pending
// outcome, the group's record, the shell appending exit status 0 (once
// told, so that a kill before decides nothing), the group's end, the final
// outcome, and the report's answer. exited is set to ti from the shell's
// exit until the outcome is forgotten: the span in which a killed worker's
// next life must report the try.
func crashTry(l *Ledger, ti string, exited *string) error {
	o, err := l.Record(Outcome{TIID: ti, TryNumber: 1, Token: "token-" + ti})
	if err != nil {
		return err
	}
	cmd := exec.Command("bash", "-c", o.ExitTrap()+`read -r _`) //nolint:gosec // the test's own command
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
	*exited = ti
	g.Close()
	if err != nil {
		return err
	}
	o.State = "success"
	if o, err = l.Record(o); err != nil {
		return err
	}
	*exited = ""
	l.Forget(o)
	return nil
}

// crashingWorker runs crashTry twice as crashEnv says.
func crashingWorker(arg string) int {
	f := strings.Split(arg, ":")
	dir := f[0]
	at, err := strconv.Atoi(f[1])
	var compact int64
	if err == nil {
		compact, err = strconv.ParseInt(f[2], 10, 64)
	}
	var l *Ledger
	if err == nil {
		l, err = OpenLedger(dir)
	}
	if err == nil {
		l.compactAt = compact
		steps, exited := 0, ""
		l.crashAt = func(string) {
			if steps++; steps == at {
				_ = os.WriteFile(filepath.Join(dir, "expect"), []byte(exited), 0o600)
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
		}
		for _, ti := range []string{"first", "second"} {
			if err = crashTry(l, ti, &exited); err != nil {
				break
			}
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "steps"), []byte(strconv.Itoa(steps)), 0o600)
		}
	}
	return helperExit(dir, err)
}

// A worker killed after any step of its ledger (each append, each
// compaction, each generation removed) leaves a journal its next life
// reads right: a try is reported (once, success) exactly when its shell
// had exited 0 and the report was not yet answered; a try killed earlier
// is not. The next life removes the dead journal once it holds nothing;
// its own holds nothing after its try either. With a journal compacted at
// every append, the pending try's shell appends to a generation that has
// been succeeded, which stays until the try's end.
func TestCrashBetweenSteps(t *testing.T) {
	t.Parallel()
	for _, compact := range []int64{compactAt, 1} {
		t.Run(fmt.Sprintf("compact at %d", compact), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if out, err := helper(crashEnv, fmt.Sprintf("%s:0:%d", dir, compact)).CombinedOutput(); err != nil {
				t.Fatalf("worker: %v: %s%s", err, out, helperError(dir))
			}
			b, _ := os.ReadFile(filepath.Join(dir, "steps"))
			total, _ := strconv.Atoi(string(b))
			if total < 10 { // five appends a try
				t.Fatalf("the worker took %d steps, want at least 10", total)
			}
			for step := 1; step <= total; step++ {
				t.Run(strconv.Itoa(step), func(t *testing.T) {
					t.Parallel()
					crashAndRecover(t, step, compact)
				})
			}
		})
	}
}

func crashAndRecover(t *testing.T, step int, compact int64) {
	dir := t.TempDir()
	if err := helper(crashEnv, fmt.Sprintf("%s:%d:%d", dir, step, compact)).Run(); err == nil {
		t.Fatalf("worker was not killed at step %d", step)
	}
	if e := helperError(dir); e != "" {
		t.Fatalf("worker failed: %s", e)
	}
	expect, err := os.ReadFile(filepath.Join(dir, "expect"))
	if err != nil {
		t.Fatal(err)
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
	if ti := string(expect); ti != "" {
		want = []string{ti + " success token-" + ti}
	}
	if !slices.Equal(got, want) {
		t.Errorf("reported %q, want %q", got, want)
	}
	if left := journals(t, dir); !slices.Equal(left, []string{filepath.Base(next.path())}) {
		t.Errorf("journals left: %q, want only the next life's", left)
	}
	var exited string
	if err := crashTry(next, "third", &exited); err != nil {
		t.Fatal(err)
	}
	if h := held(t, dir); !h.empty() {
		t.Errorf("after another try the folder holds %d groups, %d outcomes; want nothing", len(h.groups), len(h.outcomes))
	}
}

// journals lists the journal files in dir.
func journals(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+journalExt))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

// held is what every journal in dir holds together, each replayed as a
// next life replays it.
func held(t *testing.T, dir string) *holdings {
	t.Helper()
	ledgers, err := journalsIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := newHoldings()
	for _, d := range ledgers {
		if err := d.replay(h); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// Tries overlap: a long one's shell pins the generation it appends to
// while later tries are recorded, reported and forgotten in generations
// compacted after it. What the journal holds stays right whenever its
// worker dies: a forgotten try never comes back (a generation is not
// removed while an older one stays), and a try number run again (a
// deferral's resumed run) is not answered by its first run's exit status.
func TestOverlappingTriesAcrossGenerations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	long, err := l.Record(Outcome{TIID: "long", TryNumber: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		// A short try recorded in the long one's generation, its end and
		// its report's answer in the next ones.
		l.compactAt = compactAt
		o, err := l.Record(Outcome{TIID: fmt.Sprintf("short%d", i), TryNumber: 1})
		if err == nil {
			l.compactAt = 1 // a new generation at every append from here
			o.State = "success"
			o, err = l.Record(o)
		}
		if err != nil {
			t.Fatal(err)
		}
		l.Forget(o)
	}
	if h := held(t, dir); len(h.outcomes) != 1 || h.outcomes[long.key()].State != "" {
		t.Errorf("the journal holds %+v, want the long try alone, pending", h.outcomes)
	}
	if err := exec.Command("bash", "-c", long.ExitTrap()+"exit 0").Run(); err != nil { //nolint:gosec // the test's own command
		t.Fatal(err)
	}
	if status, ok := long.ExitStatus(); !ok || status != 0 {
		t.Fatalf("the long try's shell left %d, %t; want 0", status, ok)
	}
	resumed, err := l.Record(Outcome{TIID: "long", TryNumber: 1})
	if err != nil {
		t.Fatal(err)
	}
	if status, ok := resumed.ExitStatus(); ok {
		t.Errorf("the resumed run reads its first run's exit status %d", status)
	}
}

// A line cut short by a writer killed inside its write changes nothing,
// and the lines after it count: the next line's leading break ends it.
func TestJournalSkipsACutLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "j"+journalExt)
	pending := Outcome{TIID: "ti", TryNumber: 1, Token: "tok", ExitID: "x-1"}
	whole, err := encodeLines(entry{Outcome: &pending})
	if err != nil {
		t.Fatal(err)
	}
	done := pending
	done.State = "success"
	cut, _ := encodeLines(entry{Outcome: &done})
	exit, _ := encodeLines(entry{Exit: pending.ExitID, Status: 0})
	b := append(append(whole, cut[:len(cut)/2]...), exit...)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHoldings()
	if err := replay(path, h); err != nil {
		t.Fatal(err)
	}
	if o := h.outcomes[pending.key()]; o.State != "" {
		t.Errorf("outcome state %q, want the pending record (the cut line ignored)", o.State)
	}
	if s, ok := h.exits[pending.ExitID]; !ok || s != 0 {
		t.Errorf("exit status %d, %t; want 0 read from the line after the cut one", s, ok)
	}
}

// A ledger closed holding nothing leaves no journal; one holding an
// unreported outcome leaves it for the next life.
func TestCloseRemovesAnEmptyJournal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	o, err := empty.Record(Outcome{TIID: "done", TryNumber: 1, State: "success"})
	if err != nil {
		t.Fatal(err)
	}
	empty.Forget(o)
	holding, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holding.Record(Outcome{TIID: "unanswered", TryNumber: 1, State: "success"}); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Base(holding.path())
	empty.Close()
	holding.Close()
	if left := journals(t, dir); !slices.Equal(left, []string{kept}) {
		t.Errorf("journals left: %q, want %q alone", left, kept)
	}
	if _, err := empty.Record(Outcome{TIID: "late", TryNumber: 1}); err == nil {
		t.Error("a closed ledger recorded an outcome")
	}
}
