package taskproc

import (
	"fmt"
	"syscall"
)

// prSetDumpable and prGetDumpable are prctl's PR_SET_DUMPABLE and
// PR_GET_DUMPABLE.
const (
	prSetDumpable = 4
	prGetDumpable = 3
)

// HideFromTasks makes the calling process non-dumpable: processes of the
// same user — the tasks a worker runs — can no longer read its memory,
// its file descriptors or its /proc/<pid>/environ, where a worker's
// credential (WEIR_WORKER_TOKEN) would be. Its children are not affected:
// exec makes each dumpable again. Root (and a debugger run as root) still
// reads it.
func HideFromTasks() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", errno)
	}
	return nil
}

// Hidden reports whether HideFromTasks made this process non-dumpable: its
// tasks may then not follow its /proc/<pid> links either (exe included).
func Hidden() bool {
	d, err := dumpable()
	return err == nil && d == 0
}

// dumpable reports prctl(PR_GET_DUMPABLE): 1 when the process is dumpable.
func dumpable() (int, error) {
	r, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetDumpable, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}
