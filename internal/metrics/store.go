package metrics

import (
	"context"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// Source is what the database-backed series read at each scrape.
type Source interface {
	TaskInstanceTotals(ctx context.Context) ([]store.TaskInstanceTotal, error)
	TriggerCount(ctx context.Context, p *store.TriggerListParams) (int, error)
}

// scrapeTimeout bounds the queries of one scrape.
const scrapeTimeout = 5 * time.Second

// AddStore exports, read from the database at each scrape (so the same on
// every process that exports them): task instances per queue and state,
// the queue depth (queued task instances per queue) and the triggers.
func (m *Metrics) AddStore(src Source) {
	if m == nil {
		return
	}
	m.reg.add(storeCollector{src})
}

type storeCollector struct{ src Source }

// collect leaves out the series whose query failed.
func (c storeCollector) collect() []family {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	var fams []family
	if totals, err := c.src.TaskInstanceTotals(ctx); err == nil {
		tis := family{name: "weir_task_instances", typ: typeGauge,
			help: "Task instances (current tries) per queue and state (state \"none\": not yet scheduled)."}
		depth := map[string]int{}
		for _, t := range totals {
			state := string(t.State)
			if state == "" {
				state = "none"
			}
			tis.samples = append(tis.samples, sample{labels: []label{{"queue", t.Queue}, {"state", state}}, value: float64(t.Count)})
			queued := 0
			if t.State == core.TIQueued {
				queued = t.Count
			}
			depth[t.Queue] += queued // every queue seen has a depth, 0 included
		}
		sortSamples(tis.samples)
		queues := family{name: "weir_queue_depth", typ: typeGauge, help: "Task instances queued and waiting for a worker, per queue."}
		for q, n := range depth {
			queues.samples = append(queues.samples, sample{labels: []label{{"queue", q}}, value: float64(n)})
		}
		sortSamples(queues.samples)
		fams = append(fams, tis, queues)
	}
	if n, err := c.src.TriggerCount(ctx, &store.TriggerListParams{}); err == nil {
		fams = append(fams, gauge("weir_triggers", "Triggers that deferred task instances or sensors wait on.", float64(n)))
	}
	return fams
}
