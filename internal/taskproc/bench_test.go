package taskproc

import (
	"os/exec"
	"testing"
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
