package metrics

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirflow/weir/internal/core"
)

// series are the counters and histograms the roles record besides HTTP
// latency and the scheduler's loop. Every label takes values from a fixed
// set (states, sources, operations, outcomes, registered trigger types):
// never a DAG, run or task id.
type series struct {
	tiFinished    *prometheus.CounterVec
	runsCreated   prometheus.Histogram
	tisQueued     prometheus.Histogram
	queuedBy      *prometheus.CounterVec
	triggerEvents *prometheus.CounterVec
	triggerFails  *prometheus.CounterVec
	assetEvents   *prometheus.CounterVec
	stateOps      *prometheus.CounterVec
	stateOpTime   *prometheus.HistogramVec
	workers       *workerCollector
}

// perPass are the buckets of the per-pass counts: most passes create or
// queue nothing; a catch-up or a wide run queues hundreds.
var perPass = []float64{0, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000}

func newSeries() series {
	return series{
		tiFinished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_task_instances_finished_total", Help: "Task tries whose worker reported a final state, by that state.",
		}, []string{"state"}),
		runsCreated: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "weir_scheduler_pass_dag_runs_created", Help: "DAG runs one scheduler pass created (scheduled, asset-triggered and partition runs); the sum counts them all.",
			Buckets: perPass,
		}),
		tisQueued: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "weir_scheduler_pass_task_instances_queued", Help: "Task instances one scheduler pass queued for workers; the sum counts them all.",
			Buckets: perPass,
		}),
		queuedBy: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_task_instances_queued_total", Help: "Task instances queued for workers by this process, by who queued them: a scheduler pass, or a try's success queueing what follows it (try_end).",
		}, []string{"by"}),
		triggerEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_trigger_events_total", Help: "Events triggers committed (deferred tries resumed, stream items appended, watcher events), by trigger type.",
		}, []string{"type"}),
		triggerFails: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_trigger_failures_total", Help: "Trigger runs that failed (an error, a panic, ending without an event, a type that cannot be built, a failed watcher poll), by trigger type.",
		}, []string{"type"}),
		assetEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_asset_events_created_total", Help: "Asset events committed by this process, by source (task, callback, api, watcher).",
		}, []string{"source"}),
		stateOps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_state_store_operations_total", Help: "State-store operations (task and asset state), by operation, kind and outcome.",
		}, []string{"operation", "kind", "outcome"}),
		stateOpTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "weir_state_store_operation_duration_seconds", Help: "Latency of state-store operations in their backend, by operation and kind.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"operation", "kind"}),
		workers: &workerCollector{
			slots:   prometheus.NewDesc("weir_worker_slots", "Task slots of the workers of this process ([workers] concurrency).", nil, nil),
			free:    prometheus.NewDesc("weir_worker_free_slots", "Task slots of the workers of this process that hold no try.", nil, nil),
			running: prometheus.NewDesc("weir_worker_running_tries", "Tries the workers of this process hold (claimed until their run ends).", nil, nil),
		},
	}
}

func (s *series) collectors() []prometheus.Collector {
	return []prometheus.Collector{s.tiFinished, s.runsCreated, s.tisQueued, s.queuedBy, s.triggerEvents, s.triggerFails,
		s.assetEvents, s.stateOps, s.stateOpTime, s.workers}
}

// ObserveSchedulerPass records what one scheduler pass did: the DAG runs
// it created and the task instances it queued.
func (m *Metrics) ObserveSchedulerPass(runsCreated, tasksQueued int) {
	if m == nil {
		return
	}
	m.runsCreated.Observe(float64(runsCreated))
	m.tisQueued.Observe(float64(tasksQueued))
}

// TasksQueued counts n task instances queued by by (service.QueuedBy*).
func (m *Metrics) TasksQueued(by string, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.queuedBy.WithLabelValues(by).Add(float64(n))
}

// TriggerFired counts n events a trigger of type typ committed.
func (m *Metrics) TriggerFired(typ string, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.triggerEvents.WithLabelValues(typ).Add(float64(n))
}

// TriggerFailed counts a failed run of a trigger of type typ.
func (m *Metrics) TriggerFailed(typ string) {
	if m == nil {
		return
	}
	m.triggerFails.WithLabelValues(typ).Inc()
}

// AssetEventCreated counts one committed asset event of source (a
// core.AssetSource* kind).
func (m *Metrics) AssetEventCreated(source string) {
	if m == nil {
		return
	}
	m.assetEvents.WithLabelValues(source).Inc()
}

// ObserveStateOp records one state-store operation (get, set, delete,
// clear) on a scope of kind: its latency and its outcome, read from err.
func (m *Metrics) ObserveStateOp(op string, kind core.StateKind, took time.Duration, err error) {
	if m == nil {
		return
	}
	m.stateOps.WithLabelValues(op, string(kind), Outcome(err)).Inc()
	m.stateOpTime.WithLabelValues(op, string(kind)).Observe(took.Seconds())
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
	slots, free, running *prometheus.Desc

	mu      sync.Mutex
	sources []func() (total, running int)
}

func (c *workerCollector) add(f func() (int, int)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sources = append(c.sources, f)
}

func (c *workerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.slots
	ch <- c.free
	ch <- c.running
}

// Collect reports nothing in a process that runs no worker.
func (c *workerCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	sources := c.sources
	c.mu.Unlock()
	if len(sources) == 0 {
		return
	}
	var total, running int
	for _, f := range sources {
		t, r := f()
		total, running = total+t, running+r
	}
	ch <- prometheus.MustNewConstMetric(c.slots, prometheus.GaugeValue, float64(total))
	ch <- prometheus.MustNewConstMetric(c.free, prometheus.GaugeValue, float64(max(total-running, 0)))
	ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(running))
}
