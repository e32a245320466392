package job

import (
	"context"
	"log/slog"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// MinRetention is the shortest allowed job-row retention: far longer than
// any heartbeat interval and than the dead-worker check's look-back, so
// that only rows of processes long stopped are ever pruned (a pruned row
// of a live process would come back at its next beat without its start).
const MinRetention = 10 * time.Minute

// PruneEvery is how often a Pruner deletes stale rows.
const PruneEvery = time.Minute

// Pruner is a service that deletes what was last written longer than
// Retention ago, at start and every PruneEvery: the job rows of stopped
// processes (so that the health listing shows the deployment as it is,
// not every process that ever ran) or old task logs. The scheduler role
// runs it; pruning from several schedulers at once is harmless.
type Pruner struct {
	// What names what is pruned in the logs: "job rows", "task logs".
	What string
	// Prune deletes what was last written before before and counts it
	// (store.JobPrune; store.TaskLogPrune through a Walk).
	Prune     func(ctx context.Context, before time.Time) (int64, error)
	Retention time.Duration // 0 = never prune
	Clock     core.Clock
	Logger    *slog.Logger
}

// Start prunes until ctx is done; it returns nil then. A failed prune is
// logged and tried again at the next tick.
func (p *Pruner) Start(ctx context.Context) error {
	if p.Retention <= 0 {
		return nil
	}
	clk := p.Clock
	if clk == nil {
		clk = core.SystemClock{}
	}
	log := p.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(PruneEvery)
	defer t.Stop()
	for {
		n, err := p.PruneOnce(ctx, clk.Now())
		switch {
		case err != nil && ctx.Err() == nil:
			log.WarnContext(ctx, "prune "+p.What, "err", err)
		case n > 0:
			log.InfoContext(ctx, "pruned "+p.What, "count", n, "retention", p.Retention.String())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// PruneOnce deletes what was last written before now minus Retention and
// returns how much it deleted.
func (p *Pruner) PruneOnce(ctx context.Context, now time.Time) (int64, error) {
	return p.Prune(ctx, now.Add(-p.Retention))
}

// WalkBatches is how many batches one Walk.Prune call looks at, at most.
const WalkBatches = 40

// Walk adapts a prune done a batch at a time along keys (a store's
// TaskLogPrune) to Pruner.Prune: each call goes on from where the last one
// stopped, for at most WalkBatches batches, and the walk starts over once
// it reached the end. No call reads everything at once: a table of
// millions of rows is walked over many calls (a Pruner's minutes), each
// batch short, instead of held under the database's write lock whole.
type Walk struct {
	// Batch prunes, among the keys after after, one batch of what was last
	// written before before, and returns what it deleted and the key it
	// stopped at ("" = it reached the end).
	Batch func(ctx context.Context, before time.Time, after string) (deleted int64, next string, err error)
	// After is the key the walk goes on from ("" = the first): set it to
	// start a new walk elsewhere; each batch moves it on. A batch that
	// fails leaves it.
	After string
}

// Prune is Pruner.Prune.
func (w *Walk) Prune(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for range WalkBatches {
		n, next, err := w.Batch(ctx, before, w.After)
		if err != nil {
			return total, err
		}
		total, w.After = total+n, next
		if next == "" {
			break
		}
	}
	return total, nil
}
