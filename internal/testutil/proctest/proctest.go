// Package proctest inspects the processes a test starts: whether a pid is
// still alive and which pid a task wrote to a file.
package proctest

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Alive reports whether pid exists and is not a zombie.
func Alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// ReadPID reads the pid a process wrote to path; false until the file holds
// a whole number.
func ReadPID(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return n, err == nil
}
