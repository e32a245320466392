package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/operator"
)

// The deferral scenarios (kind go only):
//
//	defer10k  one run of 10,000 Go tasks that start from a timedelta trigger
//	          (start_from_trigger, as weir.StartFromTrigger(weir.TimeDelta(d), "")
//	          compiles), so that 10,000 triggers wait at once in the
//	          standalone's triggerer; task i's delta is lead + i × window /
//	          10,000, so the fires are spread evenly over the window. Each
//	          task's resumed step records now − the event's moment (fire →
//	          resumed on a worker).
//	deferrt   a chain of 100 Go tasks whose first step defers on a
//	          timedelta of 0s with the time of the Defer call in its next
//	          kwargs; the resume step records now − that time (the deferral
//	          round trip). The chain's hand-offs are reported beside it.
var deferScenarios = map[string]bool{"defer10k": true, "deferrt": true}

const (
	deferTasks = 10000
	rtChain    = 100
	// envLatencyFile names the file the child's resume functions append
	// "task_id microseconds" lines to.
	envLatencyFile = "WEIR_BENCH_LATENCY_FILE"
	// envDeferSpread passes -defer-lead and -defer-window to the child,
	// which compiles them into defer10k's deltas.
	envDeferSpread = "WEIR_BENCH_DEFER_SPREAD"
)

// deferDAGs returns the deferral scenarios' DAGs, which a child serves
// only in those scenarios (a 10,000-task DAG would weigh on the others'
// memory): deferrt's, and with spread ("LEAD,WINDOW" durations) defer10k's.
func deferDAGs(spread string) ([]core.DAG, error) {
	rt := core.DAG{DagID: "bench_deferrt", FileLoc: "go:enginebench"}
	for i := range rtChain {
		t := core.Task{TaskID: fmt.Sprintf("t%04d", i), Operator: "go", Args: map[string]any{"function": "defer_rt"}}
		if i > 0 {
			t.DependsOn = []string{fmt.Sprintf("t%04d", i-1)}
		}
		rt.Tasks = append(rt.Tasks, t)
	}
	if spread == "" {
		return []core.DAG{rt}, nil
	}
	l, w, _ := strings.Cut(spread, ",")
	lead, err := time.ParseDuration(l)
	if err != nil {
		return nil, fmt.Errorf("%s: lead: %w", envDeferSpread, err)
	}
	window, err := time.ParseDuration(w)
	if err != nil {
		return nil, fmt.Errorf("%s: window: %w", envDeferSpread, err)
	}
	wait := core.DAG{DagID: "bench_defer10k", MaxActiveTasks: deferTasks, FileLoc: "go:enginebench"}
	for i := range deferTasks {
		delta := lead + window*time.Duration(i)/deferTasks
		wait.Tasks = append(wait.Tasks, core.Task{TaskID: fmt.Sprintf("t%05d", i), Operator: "go",
			Args: map[string]any{"function": "defer_fired"},
			StartTrigger: &core.Deferral{Trigger: core.TriggerSpec{Type: "timedelta",
				Kwargs: json.RawMessage(fmt.Sprintf(`{"delta":%q}`, delta.String()))}}})
	}
	return []core.DAG{rt, wait}, nil
}

// latencyLog appends one line per resumed task to the file the driver
// named.
type latencyLog struct {
	mu sync.Mutex
	f  *os.File
}

func (l *latencyLog) record(taskID string, d time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := fmt.Fprintf(l.f, "%s %d\n", taskID, d.Microseconds())
	return err
}

// registerDeferFunctions registers the deferral scenarios' Go functions.
func registerDeferFunctions(reg *operator.Registry, lat *latencyLog) error {
	fired := func(_ context.Context, tc operator.TaskContext) (any, error) {
		now := time.Now()
		var ev struct {
			Moment time.Time `json:"moment"`
		}
		if tc.Resume == nil || json.Unmarshal(tc.Resume.Event, &ev) != nil {
			return nil, fmt.Errorf("task %s did not resume with a timedelta event", tc.TaskID)
		}
		return nil, lat.record(tc.TaskID, now.Sub(ev.Moment))
	}
	first := func(context.Context, operator.TaskContext) (any, error) {
		kw, err := json.Marshal(map[string]time.Time{"deferred_at": time.Now()})
		if err != nil {
			return nil, err
		}
		return nil, operator.Defer(core.Deferral{Trigger: core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"0s"}`)},
			NextMethod: "resume", NextKwargs: kw})
	}
	resumed := func(_ context.Context, tc operator.TaskContext) (any, error) {
		now := time.Now()
		var kw struct {
			DeferredAt time.Time `json:"deferred_at"`
		}
		if tc.Resume == nil || json.Unmarshal(tc.Resume.Kwargs, &kw) != nil {
			return nil, fmt.Errorf("task %s resumed without its next kwargs", tc.TaskID)
		}
		return nil, lat.record(tc.TaskID, now.Sub(kw.DeferredAt))
	}
	for name, fn := range map[string]operator.GoFunc{"defer_fired": fired, "defer_rt": first,
		operator.ResumeFunctionName("defer_rt", "resume"): resumed} {
		if err := reg.Register(name, fn); err != nil {
			return err
		}
	}
	return nil
}

// deferOnce runs one repetition of a deferral scenario in a fresh
// standalone.
func deferOnce(o *options, scenario string, rep int) (res result, err error) {
	if o.kind != "go" {
		return res, fmt.Errorf("scenario %s runs Go tasks only (-kind go)", scenario)
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	lat, err := os.CreateTemp("", "enginebench-latency-")
	if err != nil {
		return res, err
	}
	lat.Close()
	defer os.Remove(lat.Name())
	n, extra := rtChain, []string{envLatencyFile + "=" + lat.Name()}
	if scenario == "defer10k" {
		n = deferTasks
		extra = append(extra, fmt.Sprintf("WEIR__TRIGGERER__CAPACITY=%d", deferTasks),
			fmt.Sprintf("%s=%s,%s", envDeferSpread, o.deferLead, o.deferWindow))
	}
	s, err := startStandalone(ctx, o, rep, extra...)
	if err != nil {
		return res, err
	}
	defer s.close()
	dag := "bench_" + scenario
	if err := s.ready(ctx, dag); err != nil {
		return res, err
	}
	t0 := time.Now()
	var tis []taskInstance
	var runEnd time.Time
	if scenario == "defer10k" {
		runID, err := s.c.trigger(ctx, dag)
		if err != nil {
			return res, err
		}
		if res.waitingAfter, err = s.waitTriggers(ctx, dag, runID, n, o.deferLead); err != nil {
			return res, err
		}
		if res.waitRSSKB, err = s.rss(); err != nil {
			return res, err
		}
		run, err := s.c.waitRun(ctx, dag, runID, 250*time.Millisecond)
		if err != nil {
			return res, err
		}
		if run.State != "success" || run.EndDate == nil {
			return res, fmt.Errorf("run %s ended %s (log: %s)", runID, run.State, s.log)
		}
		runEnd = *run.EndDate
	} else if tis, runEnd, err = s.runOnce(ctx, dag, n, 20*time.Millisecond); err != nil {
		return res, err
	}
	res.tasks, res.wall = n, runEnd.Sub(t0)
	res.perTask = res.wall / time.Duration(n)
	if tis != nil {
		if res.handoff, res.handoffP90, err = handoffs(tis); err != nil {
			return res, err
		}
	}
	if res.lat, err = readLatencies(lat.Name(), n); err != nil {
		return res, err
	}
	res.load = loadAvg()
	res.peakRSSKB, err = s.stop()
	return res, err
}

// waitTriggers waits until the run's n task instances are deferred and
// one triggerer runs all n triggers, and returns how long after the
// trigger request that was. It fails when that takes longer than lead,
// the first trigger's delta: fires would then overlap the deferrals.
func (s *standalone) waitTriggers(ctx context.Context, dag, runID string, n int, lead time.Duration) (time.Duration, error) {
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(ctx, lead)
	defer cancel()
	deferred := fmt.Sprintf("/dags/%s/dagRuns/%s/taskInstances?state=deferred&limit=1", url.PathEscape(dag), url.PathEscape(runID))
	err := poll(ctx, 250*time.Millisecond, func() (bool, error) {
		var tis struct {
			TotalEntries int `json:"total_entries"`
		}
		if _, err := s.c.do(ctx, http.MethodGet, deferred, nil, &tis); err != nil || tis.TotalEntries < n {
			return false, err
		}
		var trs struct {
			Triggers []struct {
				TriggererID string `json:"triggerer_id"`
			} `json:"triggers"`
			TotalEntries int `json:"total_entries"`
		}
		if _, err := s.c.do(ctx, http.MethodGet, "/triggers?limit=1", nil, &trs); err != nil || len(trs.Triggers) == 0 ||
			trs.Triggers[0].TriggererID == "" {
			return false, err
		}
		_, err := s.c.do(ctx, http.MethodGet, "/triggers?limit=1&triggerer_id="+url.QueryEscape(trs.Triggers[0].TriggererID), nil, &trs)
		return err == nil && trs.TotalEntries >= n, err
	})
	if errors.Is(err, context.DeadlineExceeded) {
		return 0, fmt.Errorf("%d triggers were not all waiting within -defer-lead %s, before the first fire (raise it)", n, lead)
	}
	return time.Since(t0), err
}

// latencies summarizes the recorded latencies of one repetition.
type latencies struct {
	p50, p90, p99, max time.Duration
}

// readLatencies reads the latency file the child's tasks appended to; it
// must have one line per task.
func readLatencies(path string, n int) (latencies, error) {
	f, err := os.Open(path) //nolint:gosec // the driver's own temporary file
	if err != nil {
		return latencies{}, err
	}
	defer f.Close()
	var ds []time.Duration
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		_, v, _ := strings.Cut(sc.Text(), " ")
		us, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return latencies{}, fmt.Errorf("latency file %s: line %d: %q", path, len(ds)+1, sc.Text())
		}
		ds = append(ds, time.Duration(us)*time.Microsecond)
	}
	if err := sc.Err(); err != nil {
		return latencies{}, err
	}
	if len(ds) != n {
		return latencies{}, fmt.Errorf("latency file %s has %d lines, want one per task (%d)", path, len(ds), n)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return latencies{p50: ds[n/2], p90: ds[n*9/10], p99: ds[n*99/100], max: ds[n-1]}, nil
}
