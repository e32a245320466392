package weirtest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Proc is a long-running weir process (a role) started by a test in its
// own process group. It is killed when the test ends, and its output is
// logged when the test failed.
type Proc struct {
	name string
	cmd  *exec.Cmd
	out  string        // the file of its stdout and stderr
	done chan struct{} // closed when the process has exited
}

// StartProc starts `bin args...` with env added to Env; name labels its
// output in failure messages.
func StartProc(t testing.TB, bin, name string, env []string, args ...string) *Proc {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "output-")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close() // the process has its own descriptor
	p := &Proc{name: name, out: out.Name(), done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = Env(env)
	p.cmd.Stdout, p.cmd.Stderr = out, out // a file: no pipe for orphaned task processes to hold
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start weir %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		_ = p.cmd.Wait() // the exit status is read from cmd.ProcessState
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("----- output of %s (weir %s) -----\n%s----- end of %s -----",
				name, strings.Join(args, " "), p.Output(), name)
		}
	})
	return p
}

// PID is the process's id (and its process group's).
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Output is what the process printed so far, stdout and stderr together.
func (p *Proc) Output() string {
	b, _ := os.ReadFile(p.out) // a missing file reads as no output
	return string(b)
}

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to the process itself (not its group).
func (p *Proc) Signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(p.PID(), sig); err != nil && !p.Exited() {
		t.Fatalf("send %v to %s (pid %d): %v", sig, p.name, p.PID(), err)
	}
}

// Kill SIGKILLs the whole process group, if still running, and waits.
func (p *Proc) Kill() {
	if !p.Exited() {
		_ = syscall.Kill(-p.PID(), syscall.SIGKILL)
	}
	<-p.done
}

// WaitExit waits for the process to exit and returns its exit code.
func (p *Proc) WaitExit(t testing.TB) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(WaitLong):
		t.Fatalf("%s did not exit within %s", p.name, WaitLong)
		return -1
	}
}

// WaitOutput waits until the output matches re and returns the submatches.
func (p *Proc) WaitOutput(t testing.TB, re *regexp.Regexp) []string {
	t.Helper()
	var m []string
	WaitFor(t, "output of "+p.name+" to match "+re.String(), func() (bool, string) {
		if m = re.FindStringSubmatch(p.Output()); m != nil {
			return true, ""
		}
		if p.Exited() {
			t.Fatalf("%s exited (%v) before printing %s", p.name, p.cmd.ProcessState, re)
		}
		return false, "not printed yet"
	})
	return m
}

// Result is the outcome of a short weir command.
type Result struct {
	Stdout, Stderr string
	Code           int
}

func (r Result) String() string {
	return "exit code " + strconv.Itoa(r.Code) + "\n--- stdout ---\n" + r.Stdout + "--- stderr ---\n" + r.Stderr
}

// Run runs a short command `bin args...` to completion.
func Run(t testing.TB, bin string, env []string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitLong)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = Env(env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run weir %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return Result{Stdout: stdout.String(), Stderr: stderr.String(), Code: cmd.ProcessState.ExitCode()}
}

// MustRun runs a command that must succeed and returns its stdout.
func MustRun(t testing.TB, bin string, env []string, args ...string) string {
	t.Helper()
	r := Run(t, bin, env, args...)
	if r.Code != 0 {
		t.Fatalf("weir %s failed: %s", strings.Join(args, " "), r)
	}
	return r.Stdout
}

// WaitFor polls cond until it reports true, failing t after WaitLong with
// the last status cond gave.
func WaitFor(t testing.TB, what string, cond func() (ok bool, status string)) {
	t.Helper()
	WaitWithin(t, WaitLong, what, cond)
}

// WaitWithin is WaitFor with its own bound, for waits that span several
// recoveries.
func WaitWithin(t testing.TB, within time.Duration, what string, cond func() (ok bool, status string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, status := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last status: %s", within, what, status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
