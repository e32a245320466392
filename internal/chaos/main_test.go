package chaos

import (
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

var (
	seedFlag   = flag.Uint64("chaos.seed", 0, "seed of the random fault moments; 0 = from the clock (the seed is printed)")
	killsFlag  = flag.Int("chaos.kills", 30, "SIGKILLs of each role")
	trialFlag  = flag.Int("chaos.trial", 10, "SIGKILLs per trial: after each trial the runs are let finish and checked")
	outageFlag = flag.Duration("chaos.outage", 30*time.Second, "how long the API server is unreachable from a worker")
	reportFlag = flag.String("chaos.report", os.Getenv("WEIR_CHAOS_REPORT"), "also write the figures to this file ($WEIR_CHAOS_REPORT)")
)

// weirBin is the weir binary built once for the whole test run.
var weirBin string

// seed is the run's seed: -chaos.seed, or one from the clock.
var seed uint64

// figures are one scenario's counts.
type figures struct {
	scenario         string
	trials, faults   int
	runs, tis, tries int
	anomalies        int
	window           int // commands run again after a kill at their end (atLeastOnce)
	elapsed          time.Duration
}

// book collects the figures of every scenario, printed at the end.
var book struct {
	mu   sync.Mutex
	rows []figures
}

func record(f figures) {
	book.mu.Lock()
	defer book.mu.Unlock()
	book.rows = append(book.rows, f)
}

// rngFor is a scenario's own random source: the same seed gives each
// scenario the same fault moments whatever order the scenarios run in.
func rngFor(scenario string) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(scenario))
	return rand.New(rand.NewPCG(seed, h.Sum64())) //nolint:gosec // fault moments, not secrets
}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	flag.Parse()
	// The scenarios mostly wait for processes: run them all at once unless
	// -test.parallel says otherwise.
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		_ = flag.Set("test.parallel", "8")
	}
	seed = *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano()) //nolint:gosec // a positive clock reading
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	bin, cleanup, err := weirtest.Build(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	defer cleanup()
	weirBin = bin
	fmt.Printf("chaos: seed %d (rerun with -chaos.seed=%d), %d kills per role\n", seed, seed, *killsFlag)
	code := pgtest.Main(m)
	printFigures(os.Stdout)
	if *reportFlag != "" {
		if f, err := os.Create(*reportFlag); err == nil {
			printFigures(f)
			_ = f.Close()
		}
	}
	return code
}

// printFigures writes the table of every scenario's figures.
func printFigures(w io.Writer) {
	book.mu.Lock()
	defer book.mu.Unlock()
	rows := append([]figures(nil), book.rows...)
	sort.Slice(rows, func(i, j int) bool { return rows[i].scenario < rows[j].scenario })
	var total figures
	fmt.Fprintf(w, "chaos figures (seed %d):\n", seed)
	fmt.Fprintf(w, "  %-22s %6s %6s %6s %7s %6s %9s %13s %8s\n", "scenario", "trials", "faults", "runs", "tis", "tries", "anomalies", "at-least-once", "seconds")
	for _, r := range rows {
		fmt.Fprintf(w, "  %-22s %6d %6d %6d %7d %6d %9d %13d %8.0f\n", r.scenario, r.trials, r.faults, r.runs, r.tis, r.tries, r.anomalies, r.window, r.elapsed.Seconds())
		total.trials += r.trials
		total.faults += r.faults
		total.runs += r.runs
		total.tis += r.tis
		total.tries += r.tries
		total.anomalies += r.anomalies
		total.window += r.window
	}
	fmt.Fprintf(w, "  %-22s %6d %6d %6d %7d %6d %9d %13d\n", "total", total.trials, total.faults, total.runs, total.tis, total.tries, total.anomalies, total.window)
}
