package sqlite

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	sqlite "modernc.org/sqlite"
)

// DefaultCheckpointInterval is how long the checkpointer lets writes gather
// in the WAL before copying them into the database file.
const DefaultCheckpointInterval = 200 * time.Millisecond

// checkpointer copies the WAL into the database file beside the writer
// instead of inside its commits (ADR 0031). SQLite's default runs that copy,
// and its fsyncs, in the commit that takes the WAL past 1,000 pages, while
// that commit holds the one writer: every write queued behind it waits,
// which was the p99 of emission and of every other write under load
// (docs/benchmarks.md). The writer runs with wal_autocheckpoint=0 and tells
// the checkpointer when it runs a statement; an interval after the first such
// note the checkpointer runs a PASSIVE checkpoint on a connection of its own,
// which neither waits for nor blocks the writer or readers. So the WAL holds
// about an interval of writes; frames written after the last note of a burst
// wait for the next write or for Close, whose last connection checkpoints.
type checkpointer struct {
	dsn      string
	interval time.Duration
	logger   *slog.Logger
	wrote    chan struct{}
	cancel   context.CancelFunc
	done     chan struct{}
}

func startCheckpointer(dsn string, interval time.Duration, logger *slog.Logger) *checkpointer {
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{dsn: dsn, interval: interval, logger: logger,
		wrote: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go c.run(ctx)
	return c
}

// noteWrite tells the checkpointer the WAL may have grown; it never blocks.
func (c *checkpointer) noteWrite() {
	select {
	case c.wrote <- struct{}{}:
	default:
	}
}

// stop ends the loop (interrupting a checkpoint under way, which SQLite
// leaves consistent) and closes its connection.
func (c *checkpointer) stop() {
	c.cancel()
	<-c.done
}

func (c *checkpointer) run(ctx context.Context) {
	defer close(c.done)
	var db *sql.DB // opened at the first checkpoint: a short-lived process may never need it
	defer func() {
		if db != nil {
			_ = db.Close() // nothing is written through it but checkpoints
		}
	}()
	wait := time.NewTimer(c.interval)
	wait.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wrote:
		}
		wait.Reset(c.interval)
		select {
		case <-ctx.Done():
			return
		case <-wait.C:
		}
		if db == nil {
			db = sql.OpenDB(cachingConnector{dsn: c.dsn, drv: &sqlite.Driver{}})
			db.SetMaxOpenConns(1)
		}
		if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`); err != nil && ctx.Err() == nil {
			c.logger.Warn("sqlite WAL checkpoint failed; retried after the next write", "err", err)
		}
	}
}
