// Command targets judges one bench/run.sh run against issue 14's targets:
// it reads the run's output files (enginebench's and dagstestbench's MEDIAN
// and RATIO lines), prints each target with the figure measured, ✔ or ✗,
// and says which targets the run did not measure. bench/run.sh calls it
// last, on the files of that run only:
//
//	go run ./bench/targets bench/results/sqlite-go.txt bench/results/sqlite-bash.txt ...
//
// It exits 0 whatever the verdicts (a missed target is a figure, not a
// failure of the run); 1 only when a file cannot be read.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

func main() {
	figs := figures{}
	for _, path := range os.Args[1:] {
		f, err := os.Open(path) //nolint:gosec // the files the operator names
		if err != nil {
			fmt.Fprintln(os.Stderr, "targets:", err)
			os.Exit(1)
		}
		err = figs.read(f)
		_ = f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "targets: %s: %v\n", path, err)
			os.Exit(1)
		}
	}
	fmt.Print(figs.verdicts())
}

// figures are the cells of a run, by name: "sqlite go wide ti/s",
// "sqlite bash wide ratio", "dags test one wall", ...
type figures map[string]float64

var (
	// MEDIAN sqlite go wide: tasks=1000 wall=0.448s ti/s=2231 per_task=0.45ms ...
	engineMedian = regexp.MustCompile(`^MEDIAN (sqlite|postgres) (go|bash) (\w+): (.*)$`)
	// RATIO wide: ti/s / raw parallel spawns/s = 0.73 (...)
	engineRatio = regexp.MustCompile(`^RATIO (\w+): .* = ([0-9.]+)`)
	// MEDIAN /tmp/weir one: wall 98.6ms cpu 116.5ms rss 38.2MiB[ per step 9.21ms (cpu ...)]
	dagsTestMedian = regexp.MustCompile(`^MEDIAN \S+ (one|chain40|chain300): wall ([0-9.]+)ms(?:.* per step ([0-9.]+)ms)?`)
	field          = regexp.MustCompile(`(\S+)=([0-9.]+)`)
)

// read takes the figures of one output file. A RATIO line belongs to the
// engine and kind of the MEDIAN line before it (enginebench prints it
// after the scenario's median).
func (f figures) read(r io.Reader) error {
	var engine, kind string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if m := engineMedian.FindStringSubmatch(line); m != nil {
			engine, kind = m[1], m[2]
			for _, kv := range field.FindAllStringSubmatch(m[4], -1) {
				v, err := strconv.ParseFloat(kv[2], 64)
				if err == nil {
					f[fmt.Sprintf("%s %s %s %s", engine, kind, m[3], kv[1])] = v
				}
			}
			continue
		}
		if m := engineRatio.FindStringSubmatch(line); m != nil && engine != "" {
			if v, err := strconv.ParseFloat(m[2], 64); err == nil {
				f[fmt.Sprintf("%s %s %s ratio", engine, kind, m[1])] = v
			}
			continue
		}
		if m := dagsTestMedian.FindStringSubmatch(line); m != nil {
			if v, err := strconv.ParseFloat(m[2], 64); err == nil {
				f["dags test "+m[1]+" wall"] = v
			}
			if v, err := strconv.ParseFloat(m[3], 64); err == nil {
				f["dags test "+m[1]+" per step"] = v
			}
		}
	}
	return sc.Err()
}

// target is one of issue 14's targets: a cell (or a ratio of two cells),
// the bound, and which side of it passes.
type target struct {
	name, unit string
	cell, per  string  // per: the cell cell is divided by ("" for none)
	bound      float64 // the value to reach
	atMost     bool    // pass when value ≤ bound (else ≥)
}

var targets = []target{
	{name: "SQLite Go wide", cell: "sqlite go wide ti/s", unit: "ti/s", bound: 2000},
	{name: "SQLite Go chain300 per step", cell: "sqlite go chain300 per_task", unit: "ms", bound: 1, atMost: true},
	{name: "PostgreSQL Go wide", cell: "postgres go wide ti/s", unit: "ti/s", bound: 1000},
	{name: "PostgreSQL Go chain300 per step", cell: "postgres go chain300 per_task", unit: "ms", bound: 2, atMost: true},
	{name: "SQLite bash chain300 / raw spawn", cell: "sqlite bash chain300 ratio", unit: "×", bound: 1.5, atMost: true},
	{name: "SQLite bash chain40 / raw spawn", cell: "sqlite bash chain40 ratio", unit: "×", bound: 1.5, atMost: true},
	{name: "SQLite bash wide / raw parallel spawns", cell: "sqlite bash wide ratio", unit: "×", bound: 0.8},
	{name: "dags test one task, start-up", cell: "dags test one wall", unit: "ms", bound: 60, atMost: true},
	{name: "dags test chain40 step / standalone's", cell: "dags test chain40 per step", per: "sqlite bash chain40 per_task", unit: "×", bound: 1.1, atMost: true},
	{name: "peak RSS, SQLite Go wide (the tenth round's)", cell: "sqlite go wide peak_rss", unit: "MiB", bound: 92, atMost: true},
}

// verdicts is the table of every target against f.
func (f figures) verdicts() string {
	var b strings.Builder
	b.WriteString("TARGETS (issue 14), from this run:\n")
	met, measured := 0, 0
	for _, t := range targets {
		v, ok := f[t.cell]
		if ok && t.per != "" {
			d, has := f[t.per]
			ok = has && d > 0
			if ok {
				v /= d
			}
		}
		if !ok {
			fmt.Fprintf(&b, "  - %-46s not measured in this run\n", t.name)
			continue
		}
		measured++
		pass, rel := v >= t.bound, "≥"
		if t.atMost {
			pass, rel = v <= t.bound, "≤"
		}
		mark := "✗"
		if pass {
			mark = "✔"
			met++
		}
		fmt.Fprintf(&b, "  %s %-46s %10.2f %-4s (target %s %g)\n", mark, t.name, v, t.unit, rel, t.bound)
	}
	fmt.Fprintf(&b, "%d of %d targets met, %d not measured\n", met, len(targets), len(targets)-measured)
	return b.String()
}
