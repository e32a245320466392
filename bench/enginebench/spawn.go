package main

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Worker slots of the standalone (the default [workers] concurrency): the
// parallel spawn baseline runs as many at once.
const spawnParallel = 16

// spawnBaseline is the floor of a bash task on this machine, measured in
// the same run as the engine: starting `bash -c true` from Go and waiting
// for it, one after the other (time per spawn) and spawnParallel at a time
// (spawns per second).
type spawnBaseline struct {
	seq  time.Duration // per spawn, sequential
	rate float64       // spawns/s, spawnParallel at a time
	// CPU per spawn, spawnParallel at a time: the shell's (bash, children)
	// and this program's (self, which starts and waits for it).
	childCPU, selfCPU time.Duration
}

// measureSpawns starts n shells sequentially, then n spawnParallel at a
// time.
func measureSpawns(n int) (spawnBaseline, error) {
	spawn := func() error { return exec.Command("bash", "-c", "true").Run() }
	var b spawnBaseline
	t0 := time.Now()
	for range n {
		if err := spawn(); err != nil {
			return b, fmt.Errorf("spawn bash: %w", err)
		}
	}
	b.seq = time.Since(t0) / time.Duration(n)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	jobs := make(chan struct{})
	self0, child0 := rusage()
	t0 = time.Now()
	for range spawnParallel {
		wg.Go(func() {
			for range jobs {
				if err := spawn(); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
				}
			}
		})
	}
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	b.rate = float64(n) / time.Since(t0).Seconds()
	self1, child1 := rusage()
	b.selfCPU, b.childCPU = (self1-self0)/time.Duration(n), (child1-child0)/time.Duration(n)
	return b, first
}

func (b spawnBaseline) String() string {
	return fmt.Sprintf("raw bash -c true: sequential %.2fms per spawn, %d at a time %.0f spawns/s (cpu per spawn: bash %.2fms, Go %.2fms)",
		ms(b.seq), spawnParallel, b.rate, ms(b.childCPU), ms(b.selfCPU))
}

// rusage returns the CPU time (user + system) this process has used, and
// that of its children it has waited for.
func rusage() (self, children time.Duration) {
	cpu := func(who int) time.Duration {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return cpu(syscall.RUSAGE_SELF), cpu(syscall.RUSAGE_CHILDREN)
}

// ratio is how a repetition compares with the raw spawns measured right
// before it: a chain's time per task over one sequential spawn (target
// ≤ 1.5), a wide run's task instances/s over the parallel spawn rate
// (target ≥ 0.8).
func (b spawnBaseline) ratio(scenario string, r result) float64 {
	if scenario == "wide" {
		return float64(r.tasks) / r.wall.Seconds() / b.rate
	}
	return float64(r.perTask) / float64(b.seq)
}

// ratioLine prints the median of a scenario's repetitions' ratios, and
// each.
func ratioLine(scenario string, ratios []float64) string {
	each := make([]string, len(ratios))
	for i, r := range ratios {
		each[i] = fmt.Sprintf("%.2f", r)
	}
	m := medianOf(slices.Clone(ratios))
	what, target := "per task / raw sequential spawn", "<= 1.50"
	if scenario == "wide" {
		what, target = "ti/s / raw parallel spawns/s", ">= 0.80"
	}
	return fmt.Sprintf("RATIO %s: %s = %.2f (target %s; median of the repetitions, each against the spawns measured right before it: %s)",
		scenario, what, m, target, strings.Join(each, " "))
}
