package main

import (
	"strings"
	"testing"
)

// Lines as bench/run.sh's programs print them (a run of 2026-12-04).
const (
	sqliteGo = `== sqlite go logs=home (2 cores, load 1.07 1.50 2.35)
MEDIAN sqlite go wide: tasks=1000 wall=0.448s ti/s=2231 per_task=0.45ms cpu_per_task=0.73ms peak_rss=85.1MiB load1=1.07
MEDIAN sqlite go chain300: tasks=300 wall=0.305s ti/s=983 per_task=1.02ms cpu_per_task=1.20ms handoff_median=0.24ms handoff_p90=0.39ms peak_rss=82.9MiB load1=1.07
`
	sqliteBash = `BASELINE raw bash -c true: sequential 5.30ms per spawn, 16 at a time 210 spawns/s (cpu per spawn: bash 8.59ms, Go 0.77ms)
MEDIAN sqlite bash wide: tasks=1000 wall=6.743s ti/s=148 per_task=6.74ms cpu_per_task=3.40ms child_cpu_per_task=9.37ms peak_rss=87.0MiB load1=3.61
RATIO wide: ti/s / raw parallel spawns/s = 0.73 (target >= 0.80; median of the repetitions, each against the spawns measured right before it: 0.74 0.73 0.69)
MEDIAN sqlite bash chain40: tasks=40 wall=0.354s ti/s=113 per_task=8.84ms cpu_per_task=5.75ms child_cpu_per_task=9.75ms handoff_median=0.71ms handoff_p90=1.73ms peak_rss=63.5MiB load1=5.82
RATIO chain40: per task / raw sequential spawn = 1.36 (target <= 1.50; median of the repetitions, each against the spawns measured right before it: 1.25 1.36 1.53)
`
	postgresBash = `MEDIAN postgres bash wide: tasks=1000 wall=9.241s ti/s=108 per_task=9.24ms cpu_per_task=3.98ms child_cpu_per_task=10.88ms peak_rss=77.0MiB load1=8.83
RATIO wide: ti/s / raw parallel spawns/s = 0.63 (target >= 0.80; median of the repetitions, each against the spawns measured right before it: 0.63 0.63 0.53)
`
	dagsTest = `# dagstestbench reps=7 load 1.26 4.28 5.64
/tmp/x/weir cold (new home and database): wall 177.4ms cpu 198.6ms rss 48.6MiB
MEDIAN /tmp/x/weir version: wall 40.7ms cpu 44.6ms rss 26.5MiB
MEDIAN /tmp/x/weir one: wall 98.6ms cpu 116.5ms rss 38.2MiB
MEDIAN /tmp/x/weir chain40: wall 471.4ms cpu 744.5ms rss 41.0MiB per step 9.29ms (cpu 15.73ms)
`
)

func judge(t *testing.T, outputs ...string) string {
	t.Helper()
	f := figures{}
	for _, o := range outputs {
		if err := f.read(strings.NewReader(o)); err != nil {
			t.Fatal(err)
		}
	}
	return f.verdicts()
}

// Each target shows the run's figure and whether it is met; a bash ratio
// is the one printed after its engine's median (PostgreSQL's wide ratio
// does not stand for SQLite's), and the dags test step is judged against
// the standalone's bash chain40 of the same run.
func TestVerdictsOfARun(t *testing.T) {
	got := judge(t, sqliteGo, sqliteBash, postgresBash, dagsTest)
	for _, want := range []string{
		"✔ SQLite Go wide                                    2231.00 ti/s (target ≥ 2000)",
		"✗ SQLite Go chain300 per step                          1.02 ms   (target ≤ 1)",
		"✗ SQLite bash wide / raw parallel spawns               0.73 ×    (target ≥ 0.8)",
		"✔ SQLite bash chain40 / raw spawn                      1.36 ×    (target ≤ 1.5)",
		"✗ dags test one task, start-up                        98.60 ms   (target ≤ 60)",
		"✔ dags test chain40 step / standalone's                1.05 ×    (target ≤ 1.1)", // 9.29 / 8.84
		"✔ peak RSS, SQLite Go wide (the tenth round's)        85.10 MiB  (target ≤ 92)",
		"- PostgreSQL Go wide                             not measured in this run",
		"- SQLite bash chain300 / raw spawn               not measured in this run",
		"4 of 10 targets met, 3 not measured",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("verdicts lack %q:\n%s", want, got)
		}
	}
}

// Without the standalone's bash chain40 in the run, the dags test step
// cannot be judged, rather than judged against nothing.
func TestAStepWithoutItsStandaloneIsNotJudged(t *testing.T) {
	got := judge(t, dagsTest)
	if !strings.Contains(got, "- dags test chain40 step / standalone's          not measured in this run") {
		t.Errorf("verdicts:\n%s", got)
	}
}
