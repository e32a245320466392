// Package procstat reads a process's /proc/<pid>/stat: the fields the
// process ledger identifies processes by (state, group, start time) and
// those the metrics export (CPU time, memory).
package procstat

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/weirflow/weir/internal/sysfile"
)

// Stat is what /proc/<pid>/stat says of a process. Times are in clock
// ticks (TicksPerSecond), Start since boot.
type Stat struct {
	State        string // R, S, D, Z (zombie), X (dead), …
	Pgrp         int
	UTime, STime uint64
	Start        uint64
	VSize        uint64 // bytes
	RSS          uint64 // pages
}

// TicksPerSecond is the unit of Stat's times (USER_HZ, 100 on every Linux
// architecture Go supports).
const TicksPerSecond = 100

// Read reads the stat of process pid; "self" is this process.
func Read(pid string) (Stat, error) {
	path := filepath.Join("/proc", pid, "stat")
	b, err := sysfile.ReadFile(path)
	if err != nil {
		return Stat{}, err
	}
	// "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("%s: unexpected format", path)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 22 {
		return Stat{}, fmt.Errorf("%s: unexpected format", path)
	}
	s := Stat{State: f[0]}
	if s.Pgrp, err = strconv.Atoi(f[2]); err != nil {
		return Stat{}, fmt.Errorf("%s: process group: %w", path, err)
	}
	for _, n := range []struct {
		to    *uint64
		field int
		name  string
	}{{&s.UTime, 11, "utime"}, {&s.STime, 12, "stime"}, {&s.Start, 19, "start time"}, {&s.VSize, 20, "vsize"}, {&s.RSS, 21, "rss"}} {
		if *n.to, err = strconv.ParseUint(f[n.field], 10, 64); err != nil {
			return Stat{}, fmt.Errorf("%s: %s: %w", path, n.name, err)
		}
	}
	return s, nil
}
