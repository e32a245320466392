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

// restartPages is the WAL's size (16 MiB) past which a checkpoint that the
// writer's commits overtook is finished on the writer. SQLite starts the
// WAL over only at a write that finds every frame copied, which a passive
// checkpoint never leaves behind while commits keep coming (it copies what
// was there when it began): under writes without a pause the WAL would grow
// without bound. So when a WAL this large is not wholly copied, the
// checkpointer copies the rest through the writer's own connection, between
// two of its transactions, once passive checkpoints have left only a few
// frames (leftPages), and the next write starts the WAL over.
const restartPages = 4000

// walBackstopPages is the writer's own automatic checkpoint (64 MiB of WAL):
// a backstop that only a checkpointer far behind lets the WAL reach.
const walBackstopPages = 16000

// checkpointer copies the WAL into the database file beside the writer
// instead of inside its commits (ADR 0031). SQLite's default runs that copy,
// and its fsyncs, in the commit that takes the WAL past 1,000 pages, while
// that commit holds the one writer: every write queued behind it waits,
// which was the p99 of emission and of every other write under load
// (docs/benchmarks.md). The writer tells the checkpointer when it runs a
// statement; an interval after the first such note the checkpointer runs a
// PASSIVE checkpoint on a connection of its own, which neither waits for
// nor blocks the writer or readers. Between bursts the WAL holds about an
// interval of writes, under writes without a pause about restartPages;
// frames written after the last note of a burst wait for the next write or
// for Close, whose last connection checkpoints.
type checkpointer struct {
	dsn      string
	interval time.Duration
	logger   *slog.Logger
	wrote    chan struct{}
	cancel   context.CancelFunc // nil until start
	done     chan struct{}
}

func newCheckpointer(dsn string, interval time.Duration, logger *slog.Logger) *checkpointer {
	return &checkpointer{dsn: dsn, interval: interval, logger: logger, wrote: make(chan struct{}, 1), done: make(chan struct{})}
}

// start runs the loop; writer is the store's writer pool (one connection),
// for the end of a checkpoint the commits overtook (restartPages).
func (c *checkpointer) start(writer *sql.DB) {
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go c.run(ctx, writer)
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
	if c.cancel == nil {
		return
	}
	c.cancel()
	<-c.done
}

func (c *checkpointer) run(ctx context.Context, writer *sql.DB) {
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
		if err := checkpoint(ctx, db, writer); err != nil && ctx.Err() == nil {
			c.logger.Warn("sqlite WAL checkpoint failed; retried after the next write", "err", err)
		}
	}
}

// leftPages is how many frames may be left for the writer to copy
// (restartPages): the frames the commits added during the last passive
// checkpoint, which reports the WAL as it was when it began. More, and
// another passive checkpoint copies them, a shorter time each round while
// the copy outruns the commits.
const leftPages = 256

// checkpoint runs passive checkpoints beside the writer and, when the WAL
// is past restartPages and only a few frames came during the last one, one
// on the writer, so that the next write starts the WAL over.
func checkpoint(ctx context.Context, db, writer *sql.DB) error {
	last := -1
	for range 4 {
		log, copied, err := passive(ctx, db)
		switch {
		case err != nil:
			return err
		case log < restartPages || log < last: // small, or started over since
			return nil
		case log == last && copied == log:
			// Nothing came during the last round and all is copied: the
			// next write starts the WAL over (a store gone quiet must not
			// take the writer every round).
			return nil
		case last >= 0 && log-last <= leftPages:
			_, _, err = passive(ctx, writer)
			return err
		}
		last = log
	}
	return nil // the commits outran the copy: the next round, or the backstop
}

// passive runs a passive checkpoint on db and returns the WAL's frames and
// how many of them are in the database file.
func passive(ctx context.Context, db *sql.DB) (log, copied int, err error) {
	var busy int
	err = db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &copied)
	return log, copied, err
}
