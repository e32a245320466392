// Command spawnbench measures what starting `bash -c true` costs this
// machine with 1, 2, … starts under way at once: the rate and the CPU the
// shells take each (their rusage), the floor under a bash task's cost at
// each degree of concurrency (docs/benchmarks.md, issue 14's fifteenth
// round).
//
// Usage:
//
//	go run ./bench/spawnbench -n 300 -par 1,2,4,16
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 300, "starts per degree of concurrency")
	pars := flag.String("par", "1,2,4,16", "degrees of concurrency (comma-separated)")
	flag.Parse()
	for _, p := range strings.Split(*pars, ",") {
		par, err := strconv.Atoi(p)
		if err != nil || par < 1 {
			fmt.Fprintf(os.Stderr, "spawnbench: -par %q: want positive integers\n", p)
			os.Exit(2)
		}
		wall, cpu, err := spawn(*n, par)
		if err != nil {
			fmt.Fprintln(os.Stderr, "spawnbench:", err)
			os.Exit(1)
		}
		fmt.Printf("par=%d starts=%d rate=%.0f/s wall_per_start=%.2fms bash_cpu_per_start=%.2fms\n",
			par, *n, float64(*n)/wall.Seconds(), ms(wall/time.Duration(*n)), ms(cpu/time.Duration(*n)))
	}
}

// spawn runs n `bash -c true`, par at a time, and returns the wall time and
// the CPU the shells took.
func spawn(n, par int) (wall, cpu time.Duration, err error) {
	before := childCPU()
	start := time.Now()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	slots := make(chan struct{}, par)
	for range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			if err := exec.Command("bash", "-c", "true").Run(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return 0, 0, fmt.Errorf("%d of %d starts failed, the first: %w", len(errs), n, errs[0])
	}
	return time.Since(start), childCPU() - before, nil
}

// childCPU is the user and system time of this process's waited-for
// children.
func childCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
