package taskproc

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStartTrue measures a task's process start through Start (its
// group, the guard's part) against a bare start, for `bash -c true`.
func BenchmarkStartTrue(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		for range b.N {
			if err := exec.Command("bash", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("guarded", func(b *testing.B) {
		for range b.N {
			cmd := exec.Command("bash", "-c", "true")
			g, err := Start(cmd, nil)
			if err != nil {
				b.Fatal(err)
			}
			_ = cmd.Wait()
			g.Close()
		}
	})
}

// BenchmarkTryFiles measures a bash try's file work in the ledger's folder,
// the shell's exit-status write included: pending outcome, group record,
// exit file, final outcome, and their retirement once reported. Its
// cpu-µs/op is the worker's and the kernel's CPU (the test process's
// rusage). Run it with -benchtime 2000x in a folder on the disk of
// interest: TMPDIR=/tmp or TMPDIR=$HOME/...
func BenchmarkTryFiles(b *testing.B) {
	l, err := OpenLedger(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuTime()
	for i := range b.N {
		ti := fmt.Sprintf("ti%d", i)
		o := Outcome{TIID: ti, TryNumber: 1, ExitFile: l.ExitFile(ti, 1), Token: "token"}
		if _, err := l.Record(o); err != nil {
			b.Fatal(err)
		}
		group, err := l.add(os.Getpid())
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.OpenFile(o.ExitFile, os.O_RDWR|os.O_CREATE, 0o644) //nolint:gosec // as the trap's `1<>`
		if err == nil {
			_, err = f.WriteString("0\n")
			_ = f.Close()
		}
		if err != nil {
			b.Fatal(err)
		}
		l.remove(group)
		o.State = "success"
		reported, err := l.Record(o)
		if err != nil {
			b.Fatal(err)
		}
		reported()
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
