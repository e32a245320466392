package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// rssDAG is a streaming operator over n events: a command trigger prints
// {"n": 1} .. {"n": n} as fast as it can (resuming after the stream's last
// index), and the handler acknowledges each event as it reads it.
func rssDAG(dagID string, n int) string {
	return fmt.Sprintf(`dag_id: %s
tasks:
  - task_id: load
    operator: sensor
    trigger:
      type: command
      command: |
        seq $((WEIR_STREAM_LAST_INDEX + 2)) %d | awk '{printf "{\"n\": %%d}\n", $1}'
    handle_command: |
        awk '{print "ok" > "/dev/fd/3"; fflush("/dev/fd/3")}'
`, dagID, n)
}

// BenchmarkStreamRSS measures the resident memory of one `weir standalone`
// (the built binary, SQLite, default configuration; its children — the
// trigger's and the handler's processes — not counted) before and after a
// 1,000,000-event stream (docs/benchmarks.md, "RSS over a 1,000,000-event
// stream"): a warm-up run streams 20,000 events through the same DAG
// shape first, so that "before" is a process that has streamed already;
// then the 1,000,000-event run, its RSS sampled every second (the peak),
// and "after" once it succeeded. "fresh" is the process just started.
//
//	go test -run '^$' -bench StreamRSS -benchtime 1x -timeout 60m ./internal/e2e/
func BenchmarkStreamRSS(b *testing.B) {
	const events = 1_000_000
	dags, home := b.TempDir(), b.TempDir()
	weirtest.WriteFile(b, filepath.Join(dags, "rss.yaml"), rssDAG("rss_warm", 20_000)+"---\n"+rssDAG("rss_million", events))
	s := weirtest.StartStandalone(b, weirBin, home, dags)
	api := s.API
	api.WaitDAG("rss_warm")
	api.WaitDAG("rss_million")
	pid := s.PID()
	fresh := rssKiB(b, pid)
	runStream := func(dagID, runID string, sample func()) time.Duration {
		api.Trigger(dagID, runID, nil)
		begin := time.Now()
		var run core.DagRun
		for deadline := begin.Add(time.Hour); ; time.Sleep(time.Second) { // one look a second: the API calls cost little
			sample()
			if run = api.Run(dagID, runID); run.State.Terminal() {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s %s did not finish within an hour:\n%s", dagID, runID, api.DescribeRun(dagID, runID, run))
			}
		}
		if run.State != core.RunSuccess {
			b.Fatalf("%s %s = %s:\n%s", dagID, runID, run.State, api.DescribeRun(dagID, runID, run))
		}
		return time.Since(begin)
	}
	b.ResetTimer()
	for i := range b.N {
		runStream("rss_warm", fmt.Sprintf("w%d", i), func() {})
		before := rssKiB(b, pid)
		peak := before
		took := runStream("rss_million", fmt.Sprintf("m%d", i), func() { peak = max(peak, rssKiB(b, pid)) })
		after := rssKiB(b, pid)
		b.ReportMetric(float64(fresh)/1024, "fresh-MiB")
		b.ReportMetric(float64(before)/1024, "before-MiB")
		b.ReportMetric(float64(after)/1024, "after-MiB")
		b.ReportMetric(float64(peak)/1024, "peak-MiB")
		b.ReportMetric(float64(after)/float64(before), "after/before")
		b.ReportMetric(events/took.Seconds(), "events/s")
		b.Logf("RSS fresh %d KiB, before %d KiB, after %d KiB (%.2f×), peak %d KiB; %d events in %v",
			fresh, before, after, float64(after)/float64(before), peak, events, took.Round(time.Second))
	}
}

// rssKiB is the resident set size of process pid, in KiB (VmRSS).
func rssKiB(b *testing.B, pid int) int64 {
	b.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatalf("VmRSS %q: %v", v, err)
			}
			return n
		}
	}
	b.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
