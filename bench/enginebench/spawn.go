package main

import (
	"cmp"
	"flag"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
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
	var b spawnBaseline
	seq, err := spawnAt(n, 1)
	if err != nil {
		return b, err
	}
	par, err := spawnAt(n, spawnParallel)
	b.seq, b.rate, b.childCPU, b.selfCPU = seq.wall/time.Duration(n), float64(n)/par.wall.Seconds(),
		par.childCPU/time.Duration(n), par.selfCPU/time.Duration(n)
	return b, err
}

// spawnCost is what n starts of `bash -c true`, par at a time, took: the
// wall time and the CPU of the shells and of this program.
type spawnCost struct {
	wall, childCPU, selfCPU time.Duration
}

// spawnAt starts n `bash -c true`, par at a time, waiting for each.
func spawnAt(n, par int) (spawnCost, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	jobs := make(chan struct{})
	self0, child0 := rusage()
	t0 := time.Now()
	for range par {
		wg.Go(func() {
			for range jobs {
				if err := exec.Command("bash", "-c", "true").Run(); err != nil {
					mu.Lock()
					first = cmp.Or(first, fmt.Errorf("spawn bash: %w", err))
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
	wall := time.Since(t0)
	self1, child1 := rusage()
	return spawnCost{wall: wall, childCPU: child1 - child0, selfCPU: self1 - self0}, first
}

// spawns is the "spawns" mode: what `bash -c true` costs this machine at
// each degree of concurrency, the floor under a bash task's cost there
// (docs/performance-history.md, issue 14's fifteenth round): on a VM whose page
// faults and system calls cost more when both vCPUs take them, two
// starts at a time cost each shell far more CPU than one.
func spawns(args []string) error {
	fs := flag.NewFlagSet("enginebench spawns", flag.ContinueOnError)
	n := fs.Int("n", 300, "starts per degree of concurrency")
	pars := fs.String("par", "1,2,4,16", "degrees of concurrency (comma-separated)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 1 {
		return fmt.Errorf("-n %d: want at least 1", *n)
	}
	for _, p := range strings.Split(*pars, ",") {
		par, err := strconv.Atoi(p)
		if err != nil || par < 1 {
			return fmt.Errorf("-par %q: want positive integers, comma-separated", p)
		}
		c, err := spawnAt(*n, par)
		if err != nil {
			return err
		}
		per := time.Duration(*n)
		fmt.Printf("SPAWNS par=%d starts=%d rate=%.0f/s wall_per_start=%.2fms bash_cpu_per_start=%.2fms go_cpu_per_start=%.2fms\n",
			par, *n, float64(*n)/c.wall.Seconds(), ms(c.wall/per), ms(c.childCPU/per), ms(c.selfCPU/per))
	}
	return nil
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
