package chaos

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// TestAPIServersOutageAndRollingRestart runs two api-servers on one
// PostgreSQL database, the worker given both (--api-url a,b). While runs
// go on, every api-server is SIGKILLed and kept down for -chaos.outage
// (30 s), then started again; then a rolling restart stops (SIGTERM) and
// starts each in turn. Nothing is lost and nothing runs again: every run
// succeeds, no command completes twice and no task instance needed a try
// beyond its own (the flaky task's second) unless the earlier one never
// started (a claim whose answer died with its api-server). Not parallel: it runs before
// the SIGKILL scenarios rather than beside them, as its five processes
// would stretch the moments around their kills that atLeastOnce bounds.
//
// The heartbeat timeout is half the outage: the tries go unheard for
// longer than it, and none is failed over, as none can be heard while no
// api-server is up (docs/state-machines.md#dead-workers).
func TestAPIServersOutageAndRollingRestart(t *testing.T) {
	port2 := stablePort(t)
	base2 := "http://127.0.0.1:" + strconv.Itoa(port2)
	d := deploy(t, "api-servers outage", deploymentOptions{postgres: pgtest.DSN(t),
		heartbeatTimeout: *outageFlag / 2,
		workerURL:        func(base string) string { return base + "," + base2 }})
	defer d.finish()
	env2 := append(append([]string(nil), d.env...), "WEIR__API__PORT="+strconv.Itoa(port2))
	start2 := func() *weirtest.Proc {
		p := weirtest.StartProc(t, d.bin, d.scenario+" api-server-2", env2, "api-server", "--home", d.home)
		weirtest.NewClient(t, base2, "").WaitHealthy()
		return p
	}
	second := start2()

	d.keepRunning(3)
	waitRunning(d)
	d.snapshot()
	for _, p := range []*weirtest.Proc{d.procs["api-server"], second} {
		p.Signal(t, syscall.SIGKILL)
		p.WaitExit(t)
	}
	d.fig.faults++
	time.Sleep(*outageFlag) // the outage lasts this long
	d.start(d.role("api-server"))
	second = start2()
	d.check()
	checkNoRerun(d)

	d.keepRunning(3)
	waitRunning(d)
	d.snapshot()
	for i := range 2 {
		p := d.procs["api-server"]
		if i == 1 {
			p = second
		}
		p.Signal(t, syscall.SIGTERM)
		p.WaitExit(t)
		d.fig.faults++
		if i == 0 {
			d.start(d.role("api-server"))
		} else {
			second = start2()
		}
	}
	d.check()
	checkNoRerun(d)
	second.Signal(t, syscall.SIGTERM)
	second.WaitExit(t)
}

// waitRunning waits until a task of the deployment's runs is running, so
// that the fault strikes a try.
func waitRunning(d *deployment) {
	d.t.Helper()
	weirtest.WaitFor(d.t, "a task to run", func() (bool, string) {
		for _, id := range d.runs[d.checked:] {
			for _, ti := range d.api.TaskInstances(dagID, id) {
				if ti.State == core.TIRunning {
					return true, ""
				}
			}
		}
		return false, "none running"
	})
}

// checkNoRerun: in the runs checked so far, every task instance ended on
// its own try (the flaky task, which fails its first on purpose, on its
// second; a higher try means a try was failed and ran again), and its log
// has its tail: the worker's line saying how the try ended.
func checkNoRerun(d *deployment) {
	d.t.Helper()
	for _, id := range d.runs[:d.checked] {
		for _, ti := range d.api.TaskInstances(dagID, id) {
			want := 1
			if ti.TaskID == "flaky" {
				want = 2
			}
			var bad string
			if ti.TryNumber != want && startedBefore(d, id, &ti) {
				bad = fmt.Sprintf("run %s task %s[%d] ended %s on try %d, want try %d: a try ran again",
					id, ti.TaskID, ti.MapIndex, ti.State, ti.TryNumber, want)
			} else if log := tryLog(d, id, &ti); !strings.Contains(log, "weir: try ended success") {
				bad = fmt.Sprintf("the log of run %s task %s[%d] try %d lost its tail: %q", id, ti.TaskID, ti.MapIndex, ti.TryNumber, log)
			}
			if bad != "" {
				d.t.Errorf("%s: anomaly: %s", d.scenario, bad)
				d.fig.anomalies++
			}
		}
	}
}

// startedBefore reports whether a try of ti before its last (the flaky
// task's first aside) had started. One that never started — its claim's
// answer was lost with the api-server that sent it — ran nothing, so its
// retry reruns no work (d.check counts commands run twice).
func startedBefore(d *deployment, runID string, ti *core.TaskInstance) bool {
	for _, try := range d.api.Tries(dagID, runID, ti.TaskID) {
		if try.MapIndex != ti.MapIndex || try.TryNumber >= ti.TryNumber || ti.TaskID == "flaky" && try.TryNumber == 1 {
			continue
		}
		if try.StartDate != nil {
			return true
		}
		d.t.Logf("%s: run %s task %s[%d] try %d never started (its claim's answer was lost): retried, nothing ran twice",
			d.scenario, runID, ti.TaskID, ti.MapIndex, try.TryNumber)
	}
	return false
}

// tryLog reads a try's log (its first MiB) through the REST API.
func tryLog(d *deployment, runID string, ti *core.TaskInstance) string {
	d.t.Helper()
	var page api.LogChunk
	d.api.Get(fmt.Sprintf("%s/taskInstances/%s/logs/%d?map_index=%d", weirtest.RunPath(dagID, runID), ti.TaskID, ti.TryNumber, ti.MapIndex), &page)
	return string(page.Text())
}
