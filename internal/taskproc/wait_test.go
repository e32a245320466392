package taskproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/weirflow/weir/internal/testutil/wait"
)

// waitWithin runs Wait(cmd) and fails the test if it has not returned
// within d: a lost exit report would leave it waiting for ever.
func waitWithin(t *testing.T, cmd *exec.Cmd, d time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- Wait(cmd) }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("Wait(%v) has not returned after %s", cmd.Args, d)
		return nil
	}
}

func TestWaitReportsWhatCmdWaitReports(t *testing.T) {
	for _, tc := range []struct {
		script string
		code   int // -1: killed by a signal
	}{
		{"true", 0},
		{"exit 3", 3},
		{"kill -9 $$", -1},
	} {
		t.Run(tc.script, func(t *testing.T) {
			var out bytes.Buffer
			cmd := exec.Command("bash", "-c", "echo started; "+tc.script)
			cmd.Stdout = &out // a pipe and a goroutine copying it
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			err := waitWithin(t, cmd, 30*time.Second)
			var exitErr *exec.ExitError
			switch {
			case tc.code == 0 && err != nil:
				t.Fatalf("Wait = %v, want nil", err)
			case tc.code != 0 && !errors.As(err, &exitErr):
				t.Fatalf("Wait = %v, want an *exec.ExitError", err)
			case tc.code != 0 && exitErr.ExitCode() != tc.code:
				t.Fatalf("exit code %d, want %d", exitErr.ExitCode(), tc.code)
			}
			if out.String() != "started\n" {
				t.Fatalf("output %q, want it copied to its end", out.String())
			}
		})
	}
}

func TestWaitForAProcessThatHasAlreadyExited(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 30*time.Second, "the process to be a zombie", func() bool {
		state, _, _, err := procFields(cmd.Process.Pid)
		return err == nil && state == "Z"
	})
	if err := waitWithin(t, cmd, 30*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestWaitNeverMissesAnExit starts short processes back to back, so that
// some exit between the pidfd's opening and the first wait on it (the
// report of such an exit is reset as the wait begins).
func TestWaitNeverMissesAnExit(t *testing.T) {
	for i := range 200 {
		cmd := exec.Command("true")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if err := waitWithin(t, cmd, 30*time.Second); err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
}

func TestWaitEndsWithTheCommandsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(100*time.Millisecond, cancel)
	err := waitWithin(t, cmd, 30*time.Second)
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("Wait = %v, want the process killed", err)
	}
}

// TestNoThreadWaitsForARunningProcess is why Wait exists: processes that
// run are awaited by the runtime's poller, not by threads blocked in
// waitid (one per process, with cmd.Wait).
func TestNoThreadWaitsForARunningProcess(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		// Each waits for its go file: the test sees them all waiting first.
		cmd := exec.Command("bash", "-c", fmt.Sprintf("while [ ! -e go ]; do sleep 0.05; done; exit %d", i))
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := Wait(cmd); i > 0 && err == nil {
				errs <- fmt.Errorf("process %d exited 0, want %d", i, i)
			}
		})
	}
	time.Sleep(300 * time.Millisecond) // every goroutine in Wait
	blocked := threadsIn(t, unix.SYS_WAITID)
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if blocked > 0 {
		t.Fatalf("%d threads wait in waitid for the %d running processes, want none", blocked, n)
	}
}

// threadsIn counts this process's threads blocked in system call nr.
func threadsIn(t *testing.T, nr int) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "syscall"))
		if err == nil && strings.HasPrefix(string(b), fmt.Sprint(nr)+" ") {
			n++
		}
	}
	return n
}

// The guard is awaited as a task is: no thread waits for it either.
func TestNoThreadWaitsForTheGuard(t *testing.T) {
	cmd := exec.Command("true")
	g, err := Start(cmd, nil) // starts the guard when none runs
	if err != nil {
		t.Fatal(err)
	}
	if err := Wait(cmd); err != nil {
		t.Fatal(err)
	}
	g.Close()
	time.Sleep(300 * time.Millisecond) // the guard's reaper in its wait
	if n := threadsIn(t, unix.SYS_WAITID); n > 0 {
		t.Fatalf("%d threads wait in waitid with the guard running, want none", n)
	}
}
