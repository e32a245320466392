package execapi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/job"
	"github.com/weirflow/weir/internal/store"
)

// maxVersionLen bounds the version a worker tells in its heartbeat.
const maxVersionLen = 64

// workerHeartbeat serves POST /execution/workers/heartbeat (worker
// credential): the worker process's job row, and the heartbeat of the
// tries it holds, in one write. The scheduler fails a worker's tries over
// when its rows stop (docs/state-machines.md#dead-workers).
func (s *server) workerHeartbeat(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	var req execclient.WorkerHeartbeatRequest
	if err := readJSON(w, r, smallBody, &req); err != nil {
		return err
	}
	if err := ownWorker(&req.WorkerID, c); err != nil {
		return err
	}
	switch {
	case req.ProcessID == "":
		return fmt.Errorf("process_id is required (one id per worker process): %w", core.ErrInvalid)
	case req.IntervalSeconds <= 0:
		return fmt.Errorf("interval_seconds must be positive, got %v: %w", req.IntervalSeconds, core.ErrInvalid)
	case len(req.Version) > maxVersionLen:
		return fmt.Errorf("version is %d bytes long, at most %d are allowed: %w", len(req.Version), maxVersionLen, core.ErrInvalid)
	case len(req.Holding) > maxHolding:
		return fmt.Errorf("holding lists %d tries, at most %d are allowed: %w", len(req.Holding), maxHolding, core.ErrInvalid)
	}
	now := s.clock.Now()
	started := req.StartedAt
	if started.IsZero() || started.After(now) {
		started = now
	}
	err := s.st.WorkerHeartbeat(r.Context(), &store.WorkerHeartbeatParams{Job: core.Job{
		ID: req.ProcessID, Role: job.WorkerRole, Hostname: req.Hostname, PID: req.PID, StartedAt: started, Heartbeat: now,
		WorkerID: req.WorkerID, Interval: time.Duration(req.IntervalSeconds * float64(time.Second)), Version: req.Version,
	}, Holding: req.Holding})
	if err != nil {
		return fmt.Errorf("worker heartbeat of %s: %w", req.WorkerID, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
