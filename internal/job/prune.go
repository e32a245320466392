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

// Pruner is a service that deletes the job rows of processes silent for
// longer than Retention, at start and every PruneEvery, so that the
// health listing shows the deployment as it is, not every process that
// ever ran. The scheduler role runs it; pruning from several schedulers
// at once is harmless.
type Pruner struct {
	Store     PruneStore
	Retention time.Duration // 0 = never prune
	Clock     core.Clock
	Logger    *slog.Logger
}

// PruneStore is what a Pruner needs of the store; *sqlstore.Store and
// every store.Store satisfy it.
type PruneStore interface {
	JobPrune(ctx context.Context, before time.Time) (int64, error)
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
		if err := p.PruneOnce(ctx, clk.Now()); err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "prune job rows", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// PruneOnce deletes the rows silent since before now minus Retention.
func (p *Pruner) PruneOnce(ctx context.Context, now time.Time) error {
	n, err := p.Store.JobPrune(ctx, now.Add(-p.Retention))
	if err == nil && n > 0 && p.Logger != nil {
		p.Logger.InfoContext(ctx, "pruned job rows of stopped processes", "rows", n, "retention", p.Retention.String())
	}
	return err
}
