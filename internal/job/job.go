// Package job records that a Weir process is alive: a row per process in the
// job table with its role, host, pid and a heartbeat refreshed periodically.
// Health checks (GET /api/v2/monitor/health, weir health, the UI's admin
// page) read these rows through Judge; a Pruner deletes the rows of
// processes long stopped.
package job

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
)

// DefaultInterval is how often the heartbeat is written when Interval is 0.
const DefaultInterval = 10 * time.Second

// Heartbeat is a service that writes one process's job row now and then
// every Interval until its context ends. A failed write is logged, not
// fatal: a missed heartbeat only makes the health check report staleness.
type Heartbeat struct {
	// ID is the job row's id; "" = a new UUID (a triggerer names its row
	// itself, since its triggers point at it).
	ID    string
	Store Store
	Role  string // "scheduler", "api-server", ...
	// Version is the Weir version the process runs, shown by the health
	// listing.
	Version  string
	Clock    core.Clock
	Interval time.Duration
	Logger   *slog.Logger
}

// Start writes heartbeats until ctx is done; it returns nil then.
func (h *Heartbeat) Start(ctx context.Context) error {
	clk := h.Clock
	if clk == nil {
		clk = core.SystemClock{}
	}
	interval := h.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	log := h.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	host, _ := os.Hostname()
	id := h.ID
	if id == "" {
		id = uuid.NewString()
	}
	row := &core.Job{ID: id, Role: h.Role, Hostname: host, PID: os.Getpid(), StartedAt: clk.Now(), Interval: interval, Version: h.Version}
	var run upRun
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		row.Heartbeat = clk.Now()
		row.UpSince = run.beat(row.Heartbeat, interval)
		err := h.Store.JobHeartbeat(ctx, row)
		run.wrote(row.Heartbeat, err == nil)
		if err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "job heartbeat", "role", h.Role, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// upRun tracks a process's unbroken run of heartbeat writes (core.Job's
// UpSince): it breaks when a write fails or when one comes more than
// StaleAfter after the last that succeeded (the process was stopped, or a
// write hung). A reader of the rows thereby sees an outage the process
// lived through, even one no other process observed while it lasted.
type upRun struct {
	since, last time.Time // the run's start; the last successful write
	broken      bool
}

// beat returns the run's start for a write at now.
func (r *upRun) beat(now time.Time, interval time.Duration) time.Time {
	if r.since.IsZero() || r.broken || now.Sub(r.last) > StaleAfter(interval) {
		r.since, r.broken = now, false
	}
	return r.since
}

// wrote records how the write at now went.
func (r *upRun) wrote(now time.Time, ok bool) {
	if ok {
		r.last = now
	} else {
		r.broken = true
	}
}

// Store is what a Heartbeat needs of the store (package store documents each
// method); *sqlstore.Store and every store.Store satisfy it.
type Store interface {
	JobHeartbeat(ctx context.Context, j *core.Job) error
}
