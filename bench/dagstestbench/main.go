// Command dagstestbench measures `weir dags test` as a user runs it: the
// whole process, from exec to exit, of one or more weir binaries on the
// same bash DAGs, the binaries taking turns (interleaved) so that a shared
// machine's load falls on each alike.
//
// Each binary gets a home of its own on SQLite, created by one uncounted
// `dags test` of the one-task DAG (the cold start: home, database and
// migrations; printed as "cold"). Then, -reps times, each binary in turn
// runs `weir version` (the floor of any weir process on this machine: the
// runtime and package start-up) and `dags test` of each scenario:
//
//	one       one bash task running `true`: the start-up of a test
//	chain40   40 such tasks in a chain
//	chain300  300 such tasks in a chain
//
// For each it prints the median wall time, the median CPU time (user +
// system, from the process's rusage: less sensitive to other load than
// wall time) and the peak RSS; for a chain also the time per step,
// (chain − one) / (tasks − 1), which leaves out the start-up. Compare the
// per step with the standalone's chain figures from bench/enginebench
// (-kind bash -scenario chain40) measured in the same run.
//
// Usage:
//
//	go build -o /tmp/weir ./cmd/weir && go run ./bench/dagstestbench -weir /tmp/weir -reps 10
//	go run ./bench/dagstestbench -weir /tmp/old/weir,/tmp/weir -scenario one -reps 20   # before, after
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

var chainTasks = map[string]int{"one": 1, "chain40": 40, "chain300": 300}

func main() {
	bins := flag.String("weir", "weir", "weir binaries, comma-separated: they take turns")
	scenarios := flag.String("scenario", "one,chain40", "one, chain40, chain300 (comma-separated)")
	reps := flag.Int("reps", 10, "runs of each scenario per binary (the median is reported)")
	keep := flag.Bool("keep", false, "keep the temporary homes")
	flag.Parse()
	if err := run(strings.Split(*bins, ","), strings.Split(*scenarios, ","), *reps, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "dagstestbench:", err)
		os.Exit(1)
	}
}

// sample is one process's cost.
type sample struct {
	wall, cpu time.Duration
	rssKiB    int64
}

func run(bins, scenarios []string, reps int, keep bool) error {
	for _, sc := range scenarios {
		if chainTasks[sc] == 0 {
			return fmt.Errorf("unknown scenario %q: want one, chain40 or chain300", sc)
		}
	}
	fmt.Printf("# dagstestbench reps=%d load %s\n", reps, load())
	homes := make([]string, len(bins))
	for i, bin := range bins {
		home, err := newHome()
		if err != nil {
			return err
		}
		if !keep {
			defer os.RemoveAll(home)
		}
		homes[i] = home
		cold, err := measure(bin, home, "dags", "test", "bench_one")
		if err != nil {
			return err
		}
		fmt.Printf("%s cold (new home and database): %s\n", bin, cold)
	}
	cases := append([]string{"version"}, scenarios...)
	got := map[string][]sample{} // by binary index and case
	for range reps {
		for _, c := range cases {
			for i, bin := range bins {
				args := []string{"dags", "test", "bench_" + c}
				if c == "version" {
					args = []string{"version"}
				}
				s, err := measure(bin, homes[i], args...)
				if err != nil {
					return err
				}
				k := fmt.Sprint(i, c)
				got[k] = append(got[k], s)
			}
		}
	}
	fmt.Printf("# load at the end %s\n", load())
	for i, bin := range bins {
		one := median(got[fmt.Sprint(i, "one")])
		for _, c := range cases {
			m := median(got[fmt.Sprint(i, c)])
			line := fmt.Sprintf("MEDIAN %s %s: %s", bin, c, m)
			if n := chainTasks[c]; n > 1 && one.wall > 0 {
				line += fmt.Sprintf(" per step %.2fms (cpu %.2fms)", ms((m.wall-one.wall)/time.Duration(n-1)), ms((m.cpu-one.cpu)/time.Duration(n-1)))
			}
			fmt.Println(line)
		}
	}
	return nil
}

// newHome writes the scenarios' DAG files into a fresh home.
func newHome() (string, error) {
	home, err := os.MkdirTemp("", "dagstestbench-")
	if err != nil {
		return "", err
	}
	dags := filepath.Join(home, "dags")
	if err := os.Mkdir(dags, 0o750); err != nil {
		return "", err
	}
	for sc, n := range chainTasks {
		var b strings.Builder
		fmt.Fprintf(&b, "dag_id: bench_%s\nschedule: null\nmax_active_tasks: %d\ntasks:\n", sc, n)
		for i := range n {
			fmt.Fprintf(&b, "  - task_id: t%04d\n    operator: bash\n    bash_command: \"true\"\n", i)
			if i > 0 {
				fmt.Fprintf(&b, "    depends_on: t%04d\n", i-1)
			}
		}
		if err := os.WriteFile(filepath.Join(dags, "bench_"+sc+".yaml"), []byte(b.String()), 0o600); err != nil {
			return "", err
		}
	}
	return home, nil
}

// measure runs bin with args in home, from exec to exit.
func measure(bin, home string, args ...string) (sample, error) {
	cmd := exec.Command(bin, args...) //nolint:gosec // the operator's own binary
	cmd.Env = append(os.Environ(), "WEIR_HOME="+home)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("%s %s: %w\n%s", bin, strings.Join(args, " "), err, out.String())
	}
	s := sample{wall: time.Since(t0), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.rssKiB = ru.Maxrss
	}
	return s, nil
}

func median(ss []sample) sample {
	if len(ss) == 0 {
		return sample{}
	}
	pick := func(f func(sample) int64) int64 {
		v := make([]int64, len(ss))
		for i, s := range ss {
			v[i] = f(s)
		}
		sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		return v[len(v)/2]
	}
	return sample{
		wall:   time.Duration(pick(func(s sample) int64 { return int64(s.wall) })),
		cpu:    time.Duration(pick(func(s sample) int64 { return int64(s.cpu) })),
		rssKiB: pick(func(s sample) int64 { return s.rssKiB }),
	}
}

func (s sample) String() string {
	return fmt.Sprintf("wall %.1fms cpu %.1fms rss %.1fMiB", ms(s.wall), ms(s.cpu), float64(s.rssKiB)/1024)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}
