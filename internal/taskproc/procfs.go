package taskproc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/weirflow/weir/internal/procstat"
)

// process identifies a process across pid reuse: its pid, its start time in
// clock ticks since boot, and the boot.
type process struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
	Boot  string `json:"boot_id"`
}

// procStat reads the process group and start time of a live (not zombie)
// process from /proc/<pid>/stat.
func procStat(pid int) (pgrp int, start uint64, err error) {
	state, pgrp, start, err := procFields(pid)
	if err == nil && (state == "Z" || state == "X") {
		return 0, 0, fmt.Errorf("process %d has exited: %w", pid, os.ErrNotExist)
	}
	return pgrp, start, err
}

// procFields reads the state, process group and start time of a process
// from /proc/<pid>/stat (a zombie's included).
func procFields(pid int) (state string, pgrp int, start uint64, err error) {
	st, err := procstat.Read(strconv.Itoa(pid))
	return st.State, st.Pgrp, st.Start, err
}

// identify returns the identity of a live process.
func identify(pid int) (process, error) {
	_, start, err := procStat(pid)
	if err != nil {
		return process{}, err
	}
	return identified(pid, start)
}

// identifyChild returns the identity of a child of this process not yet
// waited for, which may have exited already (a zombie keeps its start time).
func identifyChild(pid int) (process, error) {
	_, _, start, err := procFields(pid)
	if err != nil {
		return process{}, err
	}
	return identified(pid, start)
}

func identified(pid int, start uint64) (process, error) {
	boot, err := bootID()
	if err != nil {
		return process{}, err
	}
	return process{PID: pid, Start: start, Boot: boot}, nil
}

// alive reports whether p is still the same running process.
func (p process) alive() bool {
	if boot, err := bootID(); err != nil || boot != p.Boot {
		return false
	}
	_, start, err := procStat(p.PID)
	return err == nil && start == p.Start
}

// bootID names the current boot; pids and start times restart with it.
// It cannot change while this process lives, so it is read once.
var bootID = sync.OnceValues(func() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", fmt.Errorf("read boot id: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
})

// groupMembers lists the live processes of process group pgid that started
// no earlier than notBefore (a group outlives its leader; a member started
// before the recorded leader belongs to another, older group of that id).
func groupMembers(pgid int, notBefore uint64) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pg, start, err := procStat(pid); err == nil && pg == pgid && start >= notBefore {
			pids = append(pids, pid)
		}
	}
	return pids
}
