package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
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

// registerDeferFunctions registers the deferral scenarios' Go functions:
// defer_fired (defer10k's tasks, run once their trigger fired), defer_rt
// (deferrt's first step, which defers) and its resume method.
func registerDeferFunctions(reg *operator.Registry, lat *latencyLog) error {
	first := func(context.Context, operator.TaskContext) (any, error) {
		kw, err := json.Marshal(map[string]time.Time{"deferred_at": time.Now()})
		if err != nil {
			return nil, err
		}
		return nil, operator.Defer(core.Deferral{Trigger: core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"0s"}`)},
			NextMethod: "resume", NextKwargs: kw})
	}
	for name, fn := range map[string]operator.GoFunc{
		"defer_fired": lat.since("moment", func(r *operator.Resume) json.RawMessage { return r.Event }),
		"defer_rt":    first,
		operator.ResumeFunctionName("defer_rt", "resume"): lat.since("deferred_at", func(r *operator.Resume) json.RawMessage { return r.Kwargs }),
	} {
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
	if res.idleRSSKB, err = s.rss(); err != nil { // the DAGs loaded, nothing run yet
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
		if res.waitingAfter, err = s.c.waitTriggers(ctx, dag, runID, n, o.deferLead); err != nil {
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
