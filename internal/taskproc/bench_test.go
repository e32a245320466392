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

// BenchmarkTryFiles measures a bash try's ledger work, the shell's
// exit-status append included: pending outcome, group record, exit status,
// the group's end, final outcome, and the report's answer. Its cpu-µs/op is
// the worker's and the kernel's CPU (the test process's rusage). Run it
// with -benchtime 2000x in a folder on the disk of interest: TMPDIR=/tmp or
// TMPDIR=$HOME/...
func BenchmarkTryFiles(b *testing.B) {
	l, err := OpenLedger(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuTime()
	for i := range b.N {
		o, err := l.Record(Outcome{TIID: fmt.Sprintf("ti%d", i), TryNumber: 1, Token: "token"})
		if err != nil {
			b.Fatal(err)
		}
		group, err := l.add(os.Getpid())
		if err != nil {
			b.Fatal(err)
		}
		// As the trap's `>>`: open, append, close.
		f, err := os.OpenFile(o.ExitTo, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err == nil {
			_, err = fmt.Fprintf(f, "\n{\"exit\":%q,\"status\":0}\n", o.ExitID)
			_ = f.Close()
		}
		if err != nil {
			b.Fatal(err)
		}
		l.remove(group)
		o.State = "success"
		if o, err = l.Record(o); err != nil {
			b.Fatal(err)
		}
		l.Forget(o)
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
