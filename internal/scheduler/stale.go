package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/job"
	"github.com/weirflow/weir/internal/store"
)

// apiServerRole is the job role of api-servers (apiserver.Role), which
// carry every worker heartbeat to the database.
const apiServerRole = "api-server"

// checkStale handles dead workers, at most every StaleCheckInterval: a
// running try whose heartbeat is older than HeartbeatTimeout fails by the
// rule of a reported failure (service.FailDeadTry), and a queued
// instance claimed that long ago but never started goes back to the queue
// unclaimed. Every change is conditional on the state seen, so a worker
// that reports at the same moment wins or loses cleanly.
//
// Nothing is failed over unless an api-server has been seen up for the
// whole timeout: a try is stale when its last heartbeat is more than the
// timeout before the latest api-server heartbeat and the api-servers'
// unbroken uptime began before that too (job.UpNow). While no api-server
// was up, heartbeats and starts could not arrive, so their absence says
// nothing of the workers.
func (s *Scheduler) checkStale(ctx context.Context, now time.Time, res *passResult) error {
	if !s.due(&s.stale, now, s.Config.StaleCheckInterval, res) {
		return nil
	}
	_, up, ok, err := s.apiUptime(ctx, now, res)
	if err != nil {
		return err
	}
	cutoff := up.Until.Add(-s.Config.HeartbeatTimeout)
	if !ok {
		s.logUnreachable(now)
		return nil
	}
	stale, err := s.Store.TaskInstanceStale(ctx, cutoff)
	if err != nil {
		return fmt.Errorf("list stale task instances: %w", err)
	}
	stale = s.confined(stale)
	if up.Since.After(cutoff) {
		s.logUnjudgedTries(now, up, len(stale))
		return nil
	}
	if s.Config.OnlyDagID == "" { // a confined scheduler's own callbacks run in its process
		if err := s.requeueCallbacks(ctx, cutoff, now); err != nil {
			return err
		}
	}
	return s.failOver(ctx, stale, now)
}

// confined keeps, for a scheduler confined to one DAG (weir dags test),
// that DAG's tries (a killed test's among them): every other try is the
// deployment scheduler's to judge.
func (s *Scheduler) confined(tis []core.TaskInstance) []core.TaskInstance {
	if s.Config.OnlyDagID == "" {
		return tis
	}
	return slices.DeleteFunc(tis, func(ti core.TaskInstance) bool { return ti.DagID != s.Config.OnlyDagID })
}

// checkDeadWorkers fails over, at most every WorkerCheckInterval, the
// tries of workers that heartbeat as workers and went silent: a running
// try or unstarted claim of such a worker not refreshed for two of its
// heartbeat intervals (job.WorkerCutoffs) is held by none of its live
// processes. The same api-server rule as checkStale's applies.
func (s *Scheduler) checkDeadWorkers(ctx context.Context, now time.Time, res *passResult) error {
	if !s.due(&s.workers, now, s.Config.WorkerCheckInterval, res) {
		return nil
	}
	jobs, up, ok, err := s.apiUptime(ctx, now, res)
	if err != nil || !ok {
		return err
	}
	cutoffs := job.WorkerCutoffs(jobs, up)
	s.logUnjudged(jobs, cutoffs, up, now)
	for name, cutoff := range cutoffs {
		stale, err := s.Store.TaskInstanceStaleOfWorker(ctx, name, cutoff)
		if err != nil {
			return fmt.Errorf("list stale task instances of worker %s: %w", name, err)
		}
		if err := s.failOver(ctx, s.confined(stale), now); err != nil {
			return err
		}
	}
	return s.failGoneTests(ctx, jobs, up)
}

// failGoneTests ends the runs of `weir dags test` processes that are gone
// (job.Gone of the run's TestJobID, their api-server's row): killed, or
// their machine lost, before they ended their run. An unfinished run is
// failed: no other process runs it, and its queued and running instances
// would hold the DAG's max_active_tasks and pool slots for ever, leaving
// every later test of a DAG with max_active_tasks: 1 waiting. Then the
// test's hold ends (service.EndTestRun): the callbacks it had not run
// fail, which no deployment takes.
func (s *Scheduler) failGoneTests(ctx context.Context, jobs []core.Job, up job.Uptime) error {
	if !job.MayBeGone(up) { // a one-task test's scheduler never reads them
		return nil
	}
	tests, err := s.Store.DagRunList(ctx, &store.DagRunListParams{DagID: s.Config.OnlyDagID, Tests: true})
	if err != nil {
		return fmt.Errorf("list the runs of dags test processes: %w", err)
	}
	var errs []error
	for i := range tests {
		r := &tests[i]
		if !job.Gone(jobs, r.TestJobID, r.QueuedAt, s.Config.APIServerHeartbeatInterval, up) {
			continue
		}
		if err := s.endGoneTest(ctx, r); err != nil { // the other runs are still judged
			errs = append(errs, fmt.Errorf("end run %s of %s, whose dags test stopped: %w", r.RunID, r.DagID, err))
		}
	}
	return errors.Join(errs...)
}

// endGoneTest fails run r of a gone test process if it is unfinished, then
// ends the test's hold of it.
func (s *Scheduler) endGoneTest(ctx context.Context, r *core.DagRun) error {
	log := s.Logger.With("dag_id", r.DagID, "run_id", r.RunID, "job_id", r.TestJobID)
	if !r.State.Terminal() {
		switch ended, err := s.Service.FailUnfinishedRun(ctx, core.System, r.DagID, r.RunID); {
		case benign(err):
		case err != nil:
			return err
		case ended != nil:
			log.Warn("failed the run of a `weir dags test` process that stopped before it ended")
		}
	}
	n, err := s.Service.EndTestRun(ctx, r.ID)
	if n > 0 {
		log.Warn("failed the callbacks a stopped `weir dags test` process had not run", "callbacks", n)
	}
	return err
}

// apiUptime reads the job rows and the api-servers' current uptime, its
// start no earlier than this scheduler's unbroken run of checks that found
// an api-server up (heardSince): a job row spans its process's life even
// when its heartbeats could not be written meanwhile (the database was
// down), so the row alone would take an outage for uptime. A pass reads
// them once for both of its checks (res.jobs).
func (s *Scheduler) apiUptime(ctx context.Context, now time.Time, res *passResult) ([]core.Job, job.Uptime, bool, error) {
	if res.jobs != nil {
		r := res.jobs
		return r.jobs, r.up, r.ok, nil
	}
	jobs, err := s.Store.JobList(ctx)
	if err != nil {
		s.heard(now, false)
		return nil, job.Uptime{}, false, fmt.Errorf("list job rows: %w", err)
	}
	up, ok := job.UpNow(jobs, apiServerRole, now, s.Config.APIServerHeartbeatInterval)
	if since := s.heard(now, ok); up.Since.Before(since) {
		up.Since = since
	}
	res.jobs = &jobsRead{jobs: jobs, up: up, ok: ok}
	return jobs, up, ok, nil
}

// jobsRead is what apiUptime read in a pass.
type jobsRead struct {
	jobs []core.Job
	up   job.Uptime
	ok   bool
}

// heard records one check of the api-servers (up or not) and returns since
// when every check found one up: a check that failed or found none starts
// the run again. A scheduler's first check starts it too, so a scheduler
// just started judges nobody dead before a whole timeout has passed.
func (s *Scheduler) heard(now time.Time, up bool) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case up:
		s.downSince = time.Time{}
	case s.downSince.IsZero():
		s.downSince = now
	}
	if !up || s.heardFrom.IsZero() {
		s.heardFrom = now
	}
	if !up {
		s.heardFrom = time.Time{}
		return now
	}
	return s.heardFrom
}

// failOver ends the stale tries of dead workers: running ones by the rule
// of a reported failure (service.FailDeadTry), queued claims released to
// the queue.
func (s *Scheduler) failOver(ctx context.Context, stale []core.TaskInstance, now time.Time) error {
	var unclaim []string
	for i := range stale {
		ti := &stale[i]
		switch ti.State {
		case core.TIQueued:
			unclaim = append(unclaim, ti.ID)
		case core.TIRunning:
			res, err := s.Service.FailDeadTry(ctx, ti)
			switch {
			case benign(err): // its worker reported after all
			case err != nil:
				return fmt.Errorf("end the try of a dead worker: %w", err)
			default:
				s.logDead(ti, res.State)
				if s.OnTryFailedOver != nil {
					s.OnTryFailedOver(ti, res.State, res.NextRetryAt, now)
				}
			}
		default: // the store lists only queued and running instances
		}
	}
	if len(unclaim) == 0 {
		return nil
	}
	moved, err := s.Store.TaskInstanceSetState(ctx, &store.TaskInstanceSetStateParams{
		IDs: unclaim, From: []core.TIState{core.TIQueued}, To: core.TIQueued, Now: now,
	})
	if err != nil {
		return fmt.Errorf("release %d stale claims: %w", len(unclaim), err)
	}
	if len(moved) > 0 {
		s.Logger.Warn("released task instances claimed by workers that never started them", "count", len(moved))
		if err := s.Store.Notify(ctx, store.ChannelQueued); err != nil {
			return fmt.Errorf("notify workers: %w", err)
		}
	}
	return nil
}

func (s *Scheduler) logDead(ti *core.TaskInstance, to core.TIState) {
	s.Logger.Warn("task instance's worker stopped heartbeating", "dag_id", ti.DagID, "run_id", ti.RunID,
		"task_id", ti.TaskID, "map_index", ti.MapIndex, "try", ti.TryNumber, "worker_id", ti.WorkerID, "state", to)
}

// logUnreachable says, as a warning at most once a minute, that no try is
// failed over because no api-server is up, once none has been for two of
// their heartbeat intervals: an api-server starting beside this scheduler
// (standalone, `weir dags test`) writes its job row a moment after the
// first check.
func (s *Scheduler) logUnreachable(now time.Time) {
	s.mu.Lock()
	since := s.downSince
	s.mu.Unlock()
	if now.Sub(since) < 2*s.Config.APIServerHeartbeatInterval {
		return
	}
	if due, _ := s.take(&s.downLog, now, time.Minute); due {
		s.Logger.Warn("no api-server is up: no try is failed over for missed heartbeats until one has been up for task_instance_heartbeat_timeout",
			"since", since)
	}
}

// logUnjudgedTries says, at most once a minute, that tries (and claims)
// without word from their worker for longer than the timeout are not
// failed over (released) yet because the api-servers have been up for less
// than it; a check with none says nothing (every start of a scheduler is
// such a moment).
func (s *Scheduler) logUnjudgedTries(now time.Time, up job.Uptime, stale int) {
	if stale == 0 {
		return
	}
	if due, _ := s.take(&s.unjudgedLog, now, time.Minute); due {
		s.Logger.Info("tries and claims without word from their worker for task_instance_heartbeat_timeout are not failed over or released yet: the api-servers have been up only since a moment within it",
			"task_instances", stale, "api_servers_up_since", up.Since)
	}
}

// logUnjudged says, at most once a minute, which workers a check left
// unjudged because the api-servers' uptime began too recently (WorkerCutoffs
// leaves them out): a failover that does not come is then explained.
func (s *Scheduler) logUnjudged(jobs []core.Job, cutoffs map[string]time.Time, up job.Uptime, now time.Time) {
	var left []string
	for _, j := range jobs {
		if _, judged := cutoffs[j.WorkerID]; j.Role == job.WorkerRole && j.WorkerID != "" && !judged && !slices.Contains(left, j.WorkerID) {
			left = append(left, j.WorkerID)
		}
	}
	if len(left) == 0 {
		return
	}
	if due, _ := s.take(&s.unjudgedLog, now, time.Minute); !due {
		return
	}
	s.Logger.Info("workers not judged dead or alive yet: the api-servers have been heard up only since a moment within two of their heartbeat intervals",
		"workers", left, "api_servers_up_since", up.Since, "api_servers_last_heartbeat", up.Until)
}

// requeueCallbacks queues again the running callbacks whose worker stopped
// heartbeating before cutoff (the tries' rule above), while they have attempts left
// (CallbackMaxAttempts), and fails the others: callbacks run at least once
// (docs/emission.md#callbacks).
func (s *Scheduler) requeueCallbacks(ctx context.Context, cutoff, now time.Time) error {
	requeued, failed, err := s.Store.CallbackRequeueStale(ctx, &store.CallbackStaleParams{
		Before: cutoff, MaxAttempts: s.Config.CallbackMaxAttempts, Now: now})
	if err != nil {
		return fmt.Errorf("queue again the callbacks of dead workers: %w", err)
	}
	if requeued+failed > 0 {
		s.Logger.Warn("callbacks whose worker stopped heartbeating", "queued_again", requeued, "failed", failed)
	}
	return nil
}
