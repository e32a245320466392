package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
	m.reg.MustRegister(&storeCollector{src: src,
		tis:      prometheus.NewDesc("weir_task_instances", "Task instances (current tries) per queue and state (state \"none\": not yet scheduled).", []string{"queue", "state"}, nil),
		depth:    prometheus.NewDesc("weir_queue_depth", "Task instances queued and waiting for a worker, per queue.", []string{"queue"}, nil),
		triggers: prometheus.NewDesc("weir_triggers", "Triggers that deferred task instances or sensors wait on.", nil, nil),
	})
}

type storeCollector struct {
	src                  Source
	tis, depth, triggers *prometheus.Desc
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.tis
	ch <- c.depth
	ch <- c.triggers
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	totals, err := c.src.TaskInstanceTotals(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.tis, err)
	} else {
		depth := map[string]int{}
		for _, t := range totals {
			state := string(t.State)
			if state == "" {
				state = "none"
			}
			ch <- prometheus.MustNewConstMetric(c.tis, prometheus.GaugeValue, float64(t.Count), t.Queue, state)
			if _, ok := depth[t.Queue]; !ok {
				depth[t.Queue] = 0
			}
			if t.State == core.TIQueued {
				depth[t.Queue] += t.Count
			}
		}
		for q, n := range depth {
			ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(n), q)
		}
	}
	n, err := c.src.TriggerCount(ctx, &store.TriggerListParams{})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.triggers, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.triggers, prometheus.GaugeValue, float64(n))
}
