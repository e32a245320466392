package procstat

import (
	"os"
	"strconv"
	"testing"
)

// This process: alive (its main thread's state: running, or sleeping while
// another thread runs this test), in its group, with CPU time, memory and a
// start.
func TestReadSelf(t *testing.T) {
	t.Parallel()
	for spin := 0; spin < 1e9; spin++ { // a tick (10 ms) of CPU time to read
		if s, err := Read("self"); err == nil && s.UTime+s.STime > 0 {
			break
		}
	}
	for _, pid := range []string{"self", strconv.Itoa(os.Getpid())} {
		s, err := Read(pid)
		if err != nil {
			t.Fatal(err)
		}
		if (s.State != "R" && s.State != "S") || s.Pgrp <= 0 || s.Start == 0 || s.VSize == 0 || s.RSS == 0 || s.UTime+s.STime == 0 {
			t.Errorf("Read(%s) = %+v", pid, s)
		}
	}
	if _, err := Read("0"); err == nil {
		t.Error("Read of pid 0 succeeded")
	}
}
