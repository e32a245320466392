package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// waitLong bounds every wait for the product to do something: generous,
// because the machine is shared and slow; a passing test never waits it out.
const waitLong = 90 * time.Second

// fastSettings make the scheduler and workers react quickly in tests.
var fastSettings = []string{
	"WEIR__SCHEDULER__POLL_INTERVAL=200ms",
	"WEIR__SCHEDULER__DAG_DIR_LIST_INTERVAL=500ms",
	"WEIR__WORKERS__HEARTBEAT_INTERVAL=1s",
}

// weirEnv is the test's environment without any WEIR_* variable of the
// caller, plus fastSettings, plus extra (later entries win).
func weirEnv(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WEIR_") {
			env = append(env, kv)
		}
	}
	env = append(env, fastSettings...)
	return append(env, extra...)
}

// syncBuffer collects a running process's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a long-running weir process (a role) started by a test in its
// own process group. It is killed when the test ends, and its output is
// logged when the test failed.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{} // closed when the process has exited
}

// startProc starts `weir args...` with env added to weirEnv.
func startProc(t *testing.T, name string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(weirBin, args...)
	p.cmd.Env = weirEnv(env)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.cmd.WaitDelay = 5 * time.Second // orphaned task processes must not hold Wait on the pipe
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start weir %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		_ = p.cmd.Wait() // the exit status is read from cmd.ProcessState
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("----- output of %s (weir %s) -----\n%s----- end of %s -----",
				name, strings.Join(args, " "), p.out, name)
		}
	})
	return p
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signal sends sig to the process itself (not its group).
func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(p.pid(), sig); err != nil && !p.exited() {
		t.Fatalf("send %v to %s (pid %d): %v", sig, p.name, p.pid(), err)
	}
}

// kill SIGKILLs the whole process group, if still running, and waits.
func (p *proc) kill() {
	if !p.exited() {
		_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
	}
	<-p.done
}

// waitExit waits for the process to exit and returns its exit code.
func (p *proc) waitExit(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(waitLong):
		t.Fatalf("%s did not exit within %s", p.name, waitLong)
		return -1
	}
}

// waitOutput waits until the output matches re and returns the submatches.
func (p *proc) waitOutput(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	var m []string
	waitFor(t, "output of "+p.name+" to match "+re.String(), func() (bool, string) {
		if m = re.FindStringSubmatch(p.out.String()); m != nil {
			return true, ""
		}
		if p.exited() {
			t.Fatalf("%s exited (%v) before printing %s", p.name, p.cmd.ProcessState, re)
		}
		return false, "not printed yet"
	})
	return m
}

// result is the outcome of a short weir command.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return "exit code " + strconv.Itoa(r.code) + "\n--- stdout ---\n" + r.stdout + "--- stderr ---\n" + r.stderr
}

// runWeir runs a short weir command to completion.
func runWeir(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	cmd := exec.CommandContext(ctx, weirBin, args...)
	cmd.Env = weirEnv(env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run weir %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// mustWeir runs a weir command that must succeed and returns its stdout.
func mustWeir(t *testing.T, env []string, args ...string) string {
	t.Helper()
	r := runWeir(t, env, args...)
	if r.code != 0 {
		t.Fatalf("weir %s failed: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// waitFor polls cond until it reports true, failing t after waitLong with
// the last status cond gave.
func waitFor(t *testing.T, what string, cond func() (ok bool, status string)) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		ok, status := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last status: %s", waitLong, what, status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
