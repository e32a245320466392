package taskproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// ownGroupEnv makes the test binary a helper (in a process group of its
// own) that signals tasks the ways that once signalled its own group
// instead (signalTasks), and exits 0 if it survives.
const ownGroupEnv = "TASKPROC_TEST_OWN_GROUP"

// signalTasks is the helper: "cancel" ends a task's context as Start
// leaves it before the group's id is known (the context may end as soon as
// the process has started), "record" kills the leftovers of a record
// naming group 0. kill(2) takes group 0 for the caller's own: the helper
// would die of SIGTERM or SIGKILL.
func signalTasks(mode string) int {
	switch mode {
	case "cancel":
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cmd := exec.CommandContext(ctx, "sleep", "30")
		g, err := Start(cmd, nil)
		if err != nil {
			return 2
		}
		g.PGID = 0 // as it is until Start returns
		cancel()
		var exit *exec.ExitError
		if err := cmd.Wait(); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
			return 3 // the task was not stopped by its SIGTERM
		}
	case "record":
		dir, err := os.MkdirTemp("", "owngroup")
		if err != nil {
			return 2
		}
		defer os.RemoveAll(dir)
		boot, _ := bootID()
		owner := process{PID: 1 << 22, Boot: boot}
		b, _ := encodeLines(entry{Owner: &owner}, entry{Group: &process{PID: 0, Boot: boot}})
		if os.WriteFile(journalPath(dir, fmt.Sprintf("%d-0-1", owner.PID), 0), b, 0o600) != nil {
			return 2
		}
		if _, err := KillLeftovers(dir); err != nil {
			return 4
		}
	}
	time.Sleep(100 * time.Millisecond) // a signal sent to the group lands by then
	return 0
}

// Stopping a task signals the task's process group, never the worker's
// own: a task whose context ends before Start has returned its group (a
// worker stopping, a try marked failed, as the task starts) was sent
// kill(0, SIGTERM), which stopped the worker, and with it the shell or
// service manager that started it; a task group record naming group 0
// would have had KillLeftovers SIGKILL them.
func TestStoppingATaskSignalsNoOtherGroup(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"cancel", "record"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cmd := helper(ownGroupEnv, mode)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // what it signals by mistake is its own group, not the test's
			err := cmd.Run()
			var exit *exec.ExitError
			switch {
			case errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signaled():
				t.Fatalf("the helper was killed by %v: a task's signal reached its own process group", exit.Sys().(syscall.WaitStatus).Signal())
			case err != nil:
				t.Fatalf("the helper failed: %v", err)
			}
		})
	}
}
