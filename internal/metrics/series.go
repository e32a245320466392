package metrics

import (
	"errors"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// series are the counters and histograms the roles record besides HTTP
// latency and the scheduler's loop. Every label takes values from a fixed
// set (states, sources, operations, outcomes, registered trigger types):
// never a DAG, run or task id.
type series struct {
	tiFinished    counterVec
	runsCreated   histogramVec
	tisQueued     histogramVec
	queuedBy      counterVec
	triggerEvents counterVec
	triggerFails  counterVec
	assetEvents   counterVec
	stateOps      counterVec
	stateOpTime   histogramVec
	workers       *workerCollector
	scheduler     sync.Once // registers runsCreated and tisQueued (AddScheduler)
}

// perPass are the buckets of the per-pass counts: most passes create or
// queue nothing; a catch-up or a wide run queues hundreds.
var perPass = []float64{0, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000}

func newSeries() series {
	return series{
		tiFinished: newCounterVec("weir_task_instances_finished_total", "Task tries whose worker reported a final state, by that state.", "state"),
		runsCreated: newHistogramVec("weir_scheduler_pass_dag_runs_created",
			"DAG runs one scheduler pass created (scheduled, asset-triggered and partition runs); the sum counts them all.", perPass),
		tisQueued: newHistogramVec("weir_scheduler_pass_task_instances_queued",
			"Task instances one scheduler pass queued for workers; the sum counts them all.", perPass),
		queuedBy: newCounterVec("weir_task_instances_queued_total",
			"Task instances queued for workers by this process, by who queued them: a scheduler pass, or a try's success queueing what follows it (try_end).", "by"),
		triggerEvents: newCounterVec("weir_trigger_events_total",
			"Events triggers committed (deferred tries resumed, stream items appended, watcher events), by trigger type.", "type"),
		triggerFails: newCounterVec("weir_trigger_failures_total",
			"Trigger runs that failed (an error, a panic, ending without an event, a type that cannot be built, a failed watcher poll), by trigger type.", "type"),
		assetEvents: newCounterVec("weir_asset_events_created_total", "Asset events committed by this process, by source (task, callback, api, watcher).", "source"),
		stateOps: newCounterVec("weir_state_store_operations_total", "State-store operations (task and asset state), by operation, kind and outcome.",
			"operation", "kind", "outcome"),
		stateOpTime: newHistogramVec("weir_state_store_operation_duration_seconds", "Latency of state-store operations in their backend, by operation and kind.",
			[]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}, "operation", "kind"),
		workers: &workerCollector{},
	}
}

func (s *series) collectors() []collector {
	return []collector{s.tiFinished, s.queuedBy, s.triggerEvents, s.triggerFails,
		s.assetEvents, s.stateOps, s.stateOpTime, s.workers}
}

// AddScheduler exports the scheduler's pass series, at zero from the
// start: a process that runs a scheduler calls it (the others would export
// them at zero for ever).
func (m *Metrics) AddScheduler() {
	if m == nil {
		return
	}
	m.scheduler.Do(func() { m.reg.add(m.runsCreated, m.tisQueued) })
}

// ObserveSchedulerPass records what one scheduler pass did: the DAG runs
// it created and the task instances it queued.
func (m *Metrics) ObserveSchedulerPass(runsCreated, tasksQueued int) {
	if m == nil {
		return
	}
	m.runsCreated.observe(float64(runsCreated))
	m.tisQueued.observe(float64(tasksQueued))
}

// TasksQueued counts n task instances queued by by (service.QueuedBy*).
func (m *Metrics) TasksQueued(by string, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.queuedBy.add(uint64(n), by)
}

// TriggerFired counts n events a trigger of type typ committed.
func (m *Metrics) TriggerFired(typ string, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.triggerEvents.add(uint64(n), typ)
}

// TriggerFailed counts a failed run of a trigger of type typ.
func (m *Metrics) TriggerFailed(typ string) {
	if m == nil {
		return
	}
	m.triggerFails.add(1, typ)
}

// AssetEventCreated counts one committed asset event of source (a
// core.AssetSource* kind).
func (m *Metrics) AssetEventCreated(source string) {
	if m == nil {
		return
	}
	m.assetEvents.add(1, source)
}

// ObserveStateOp records one state-store operation (get, set, delete,
// clear) on a scope of kind: its latency and its outcome, read from err.
func (m *Metrics) ObserveStateOp(op string, kind core.StateKind, took time.Duration, err error) {
	if m == nil {
		return
	}
	m.stateOps.add(1, op, string(kind), Outcome(err))
	m.stateOpTime.observe(took.Seconds(), op, string(kind))
}

// Outcome names an operation's result by the sentinel its error wraps:
// ok, not_found, invalid, conflict, too_large, forbidden, unavailable or
// error.
func Outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, core.ErrNotFound):
		return "not_found"
	case errors.Is(err, core.ErrInvalid):
		return "invalid"
	case errors.Is(err, core.ErrConflict):
		return "conflict"
	case errors.Is(err, core.ErrTooLarge):
		return "too_large"
	case errors.Is(err, core.ErrForbidden), errors.Is(err, core.ErrUnauthorized):
		return "forbidden"
	case errors.Is(err, core.ErrUnavailable):
		return "unavailable"
	default:
		return "error"
	}
}

// AddWorker exports a worker's slots, read at each scrape from slots
// (its [workers] concurrency and the tries it holds). The series sum every
// worker the process runs.
func (m *Metrics) AddWorker(slots func() (total, running int)) {
	if m == nil {
		return
	}
	m.workers.add(slots)
}

// workerCollector reads the workers' slots at each scrape.
type workerCollector struct {
	mu      sync.Mutex
	sources []func() (total, running int)
}

func (c *workerCollector) add(f func() (int, int)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sources = append(c.sources, f)
}

// collect reports nothing in a process that runs no worker.
func (c *workerCollector) collect() []family {
	c.mu.Lock()
	sources := c.sources
	c.mu.Unlock()
	if len(sources) == 0 {
		return nil
	}
	var total, running int
	for _, f := range sources {
		t, r := f()
		total, running = total+t, running+r
	}
	return []family{
		gauge("weir_worker_slots", "Task slots of the workers of this process ([workers] concurrency).", float64(total)),
		gauge("weir_worker_free_slots", "Task slots of the workers of this process that hold no try.", float64(max(total-running, 0))),
		gauge("weir_worker_running_tries", "Tries the workers of this process hold (claimed until their run ends).", float64(running)),
	}
}
