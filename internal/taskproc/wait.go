package taskproc

import (
	"errors"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// Wait waits for cmd's process to exit, then for cmd (cmd.Wait: the exit
// status, the output copied to its end).
//
// cmd.Wait alone blocks a thread in waitid for the process's whole run.
// The runtime takes the goroutine's P from a thread blocked in a system
// call (sysmon, after 20µs, whenever other goroutines want it) and gives it
// to another thread, and the waiting thread, woken by the exit, has to
// win a P back: futex wake-ups and context switches on every try, dear on
// the virtual machines Weir is measured on, and sysmon kept polling every
// 20µs (docs/performance-history.md, sixteenth round). Here the process's pidfd
// waits in the runtime's poller, as a socket does, and no thread waits:
// cmd.Wait then reaps an exited process at once. Without pidfds (Linux
// before 5.3, or a filter refusing pidfd_open) it is cmd.Wait alone.
func Wait(cmd *exec.Cmd) error {
	if cmd.Process != nil && cmd.ProcessState == nil { // started, not reaped: its pid is still its own
		awaitExit(cmd.Process.Pid)
	}
	return cmd.Wait()
}

// awaitExit returns once the child pid has exited (or at once when its
// exit cannot be awaited on the poller); it does not reap it.
func awaitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// The poller reports the exit as the descriptor becoming readable, but
	// an exit before the wait began may have been reported already (and
	// the report reset): each round asks the kernel first.
	_ = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			return false // still running
		}
		return err != nil || info.Signo != 0 // exited, or nothing left to wait for
	})
}
