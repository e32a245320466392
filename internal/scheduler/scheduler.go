package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/job"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// Defaults for Config fields left zero.
const (
	DefaultPollInterval           = 2 * time.Second
	DefaultHeartbeatTimeout       = 5 * time.Minute
	DefaultCallbackMaxAttempts    = 3
	DefaultMaxRunsToCreatePerLoop = 10
	DefaultMaxActiveRuns          = 16
	DefaultSlowWakeUp             = 30 * time.Second
	// maxPassesPerWake bounds the passes one wake-up runs back to back while
	// each pass unblocks more work.
	maxPassesPerWake = 100
)

// Config tunes the scheduler; zero fields take the defaults above.
type Config struct {
	// PollInterval is the fallback wake-up when no notification arrives.
	PollInterval time.Duration
	// HeartbeatTimeout is how long a running try may go without a heartbeat
	// (or a queued claim without a start) before its worker counts as dead.
	HeartbeatTimeout time.Duration
	// CallbackMaxAttempts is how many times a callback whose worker died
	// is run before it fails ([callbacks] max_attempts).
	CallbackMaxAttempts int
	// StaleCheckInterval is how often dead workers are looked for
	// (default HeartbeatTimeout/4).
	StaleCheckInterval time.Duration
	// APIServerHeartbeatInterval is how often api-servers write their job
	// rows (default job.DefaultInterval). Tries are failed over for missed
	// heartbeats only while an api-server has been seen up for a whole
	// HeartbeatTimeout (docs/state-machines.md#dead-workers).
	APIServerHeartbeatInterval time.Duration
	// WorkerCheckInterval is how often the tries of workers silent for
	// two of their heartbeat intervals are looked for (default 2.5 s, half
	// the default [workers] heartbeat_interval).
	WorkerCheckInterval time.Duration
	// MaxRunsToCreatePerLoop bounds the scheduled runs one pass creates
	// (Airflow's max_dagruns_to_create_per_loop).
	MaxRunsToCreatePerLoop int
	// MaxMapLength bounds the instances one mapped task expands to.
	MaxMapLength int
	// SlowWakeUp is how long a wake-up's passes may run before the
	// scheduler says, and says again at each such interval, that they go
	// on (default 30 s): passes that long likely wait on the database, for
	// a lock another session holds or a transaction that does not end, and
	// this scheduler does nothing else meanwhile (no run scheduled, no try
	// failed over).
	SlowWakeUp time.Duration
	// OnlyDagID, when set, confines the scheduler to that DAG's existing
	// runs, whether or not the DAG is paused, creates no scheduled runs,
	// completes no backfills and fails over that DAG's tries alone (what
	// `weir dags test` needs). A
	// Service given to the scheduler must have the same
	// service.Config.OnlyDagID (it queues).
	OnlyDagID string
}

// Scheduler is the scheduler service. Set the fields, then call Start.
type Scheduler struct {
	Store  Store
	Clock  core.Clock
	Logger *slog.Logger
	Config Config
	// Service carries out the changes the scheduler shares with other
	// surfaces (asset-triggered runs, a dead worker's try); nil =
	// service.New over Store and Clock (Store must then be a whole
	// store.Store).
	Service *service.Service
	// OnLoop, when set, is told how long each wake-up's passes took and
	// whether they failed (metrics).
	OnLoop func(took time.Duration, err error)
	// OnPass, when set, is told after each pass how many DAG runs it
	// created and how many task instances it queued (metrics).
	OnPass func(runsCreated, tasksQueued int)
	// OnRunFinished, when set, is told of each run this scheduler ended,
	// as it was before (traces).
	OnRunFinished func(run *core.DagRun, state core.DagRunState, at time.Time)
	// OnTryFailedOver, when set, is told of each running try this
	// scheduler ended because its worker stopped heartbeating (ti as it
	// was before; state failed or up_for_retry), for traces.
	OnTryFailedOver func(ti *core.TaskInstance, state core.TIState, nextRetry *time.Time, at time.Time)

	mu          sync.Mutex
	graphs      map[int64]*graph   // per dag_version id; versions never change
	passMu      sync.Mutex         // one pass at a time; guards views
	views       map[int64]*runView // per running dag_run id (runview.go)
	exhausted   map[string]int64   // dag id → version whose schedule has no next run
	stale       periodic           // the look for dead workers' tries
	workers     periodic           // the look for silent workers' tries
	heardFrom   time.Time          // start of the unbroken run of checks finding an api-server up
	downSince   time.Time          // start of the unbroken run of checks finding none (zero while one is up)
	unjudgedLog periodic           // the last log of workers left unjudged
	downLog     periodic           // the last warning that no api-server is up
	timeouts    periodic           // the look for deferral timeouts
	tally       passTally          // what the current pass did (guarded by passMu)
	// The workers' backlog as the last queueing left it (guarded by passMu):
	lastPass time.Time      // when the last wake-up's passes ended
	backlog  map[string]int // per queue, the queued instances no worker had claimed
	claimed  []string       // the queues workers claimed from since the wake-up before (nil until its first queueing)
	busy     bool           // backlogBusy: a light pass may wait behind it
	// Kept by the last whole pass for the light passes (guarded by passMu):
	running   []core.DagRun // the running runs; nil = the next pass is whole
	paused    held          // the DAGs' pause flags
	pools     []core.Pool   // the pools (queueScheduled)
	wholeNext time.Time     // when the whole pass wanted the next one at the latest
	stop      context.CancelFunc
	primed    *subscriptions // taken by Prime for Start, which then waits before its first pass
}

// subscriptions are the notifications that wake the loop, and when it
// should wake at the latest without any.
type subscriptions struct {
	wake, streams, tasks <-chan struct{}
	next                 time.Time
}

// Start runs the scheduling loop until ctx is done or Stop is called, and
// returns nil then. A pass that fails (say, the database is briefly
// unavailable) is logged and retried at the next wake-up.
func (s *Scheduler) Start(ctx context.Context) error {
	s.init()
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.stop = cancel
	s.mu.Unlock()
	defer cancel()
	subs := s.primed
	s.primed = nil   // for this Start alone
	if subs == nil { // what happened before the subscriptions, a pass at once sees
		subs = s.subscribe(ctx)
		subs.next = s.Clock.Now()
	}
	wake, streams, tasks := subs.wake, subs.streams, subs.tasks
	timer := time.NewTimer(max(subs.next.Sub(s.Clock.Now()), 0))
	defer timer.Stop()
	// light is the light pass a try's end asked for while the workers had
	// a backlog (lightDelay); lightDue says it is set.
	light := time.NewTimer(time.Hour)
	light.Stop()
	defer light.Stop()
	lightDue := false
	failed := 0 // passes failed in a row
	for {
		full := true
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-wake:
			if !ok { // the store closed: the timer goes on alone
				wake = nil
				continue
			}
		case _, ok := <-streams:
			if !ok {
				streams = nil
				continue
			}
		case <-timer.C:
		case _, ok := <-tasks:
			if !ok {
				tasks = nil
				continue
			}
			if d := s.lightDelay(); d > 0 {
				if !lightDue {
					light.Reset(d)
					lightDue = true
				}
				continue
			}
			full = false
		case <-light.C:
			full = false
		}
		if lightDue { // this wake-up's passes do what it was due for
			light.Stop()
			lightDue = false
		}
		began := time.Now()
		slow := s.watchSlow(began)
		next, err := s.wake(ctx, full)
		slow()
		if s.OnLoop != nil {
			s.OnLoop(time.Since(began), err)
		}
		switch {
		case err != nil && ctx.Err() != nil:
			return nil
		case err != nil:
			failed++
			s.Logger.Error("scheduler pass failed", "err", err, "failed_in_a_row", failed)
		case failed > 0:
			s.Logger.Info("scheduler passes succeed again", "after_failures", failed)
			failed = 0
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(max(next.Sub(s.Clock.Now()), 0))
	}
}

// watchSlow says, while the wake-up that began then runs past SlowWakeUp,
// that it goes on (again at each SlowWakeUp), and once it ends, how long
// it took; call the function it returns when the wake-up ends.
func (s *Scheduler) watchSlow(began time.Time) (ended func()) {
	every := s.Config.SlowWakeUp
	var (
		mu         sync.Mutex
		said, over bool
		t          *time.Timer
	)
	mu.Lock() // t is set before its function runs
	t = time.AfterFunc(every, func() {
		mu.Lock()
		defer mu.Unlock()
		if over {
			return
		}
		said = true
		s.Logger.Warn("scheduler passes still running, likely waiting on the database (a lock another session holds, a transaction that does not end); this scheduler schedules nothing meanwhile",
			"for", time.Since(began).Round(time.Second))
		t.Reset(every)
	})
	mu.Unlock()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		over = true
		t.Stop()
		if said {
			s.Logger.Warn("slow scheduler passes ended", "after", time.Since(began).Round(time.Millisecond))
		}
	}
}

// Stop ends a running Start.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil {
		s.stop()
	}
}

// RunOnce runs scheduling passes until one changes nothing more, as one
// wake-up of Start does. Tests and single-shot tools call it directly.
func (s *Scheduler) RunOnce(ctx context.Context) error {
	s.init()
	_, err := s.wake(ctx, true)
	return err
}

// Prime runs the loop's first wake-up now, on the caller's goroutine, for
// a Start called next: Start then waits for a notification (or the time
// the wake-up's passes asked for) instead of passing at once, since the
// subscriptions it listens on were taken before those passes. `dags test`
// primes its scheduler before its other roles start: its first scheduling
// runs alone, and its worker's first claim finds its try queued. ctx bounds
// the subscriptions: it must outlive Start's. A Prime whose passes fail
// leaves Start to pass at once, as an unprimed one does, and returns the
// error for the caller to log.
//
// The process that primes has just made the work it primes for: the looks
// for tries that died (stale tries, dead workers' tries and gone tests'
// runs, deferral timeouts) find nothing in a run made a moment ago, so they
// take their first turn an interval later, in the loop, rather than on the
// first try's path. What an earlier test of the DAG left behind (a killed
// test's run) waits that interval more, unless a deployment's scheduler
// ends it first. A deployment's scheduler, which may start after a crash,
// does not prime.
func (s *Scheduler) Prime(ctx context.Context) error {
	s.init()
	now := s.Clock.Now()
	for _, p := range []*periodic{&s.stale, &s.workers, &s.timeouts} {
		s.take(p, now, 0)
	}
	subs := s.subscribe(ctx)
	next, err := s.wake(ctx, true)
	if err != nil {
		return err
	}
	subs.next = next
	s.primed = subs
	return nil
}

// subscribe takes the notifications the loop wakes on.
func (s *Scheduler) subscribe(ctx context.Context) *subscriptions {
	return &subscriptions{
		wake: s.Store.Subscribe(ctx, store.ChannelScheduler),
		// Envelopes landing in a stream a task iterates over wake it too
		// (lazy expansion creates their instances at once).
		streams: s.Store.Subscribe(ctx, store.ChannelStream),
		// A try's end needs only a look at the running runs (a light pass).
		tasks: s.Store.Subscribe(ctx, store.ChannelTasks),
	}
}

// wake runs passes back to back while they unblock more work and returns
// when the loop should wake next at the latest. A light wake's passes look
// only at the runs the last whole pass found running, until one of them
// asks for a whole pass (a run finished).
func (s *Scheduler) wake(ctx context.Context, full bool) (time.Time, error) {
	s.passMu.Lock()
	defer s.passMu.Unlock()
	defer func() { s.lastPass = time.Now() }()
	s.claimed = nil // the wake-up's first queueing compares with the last wake-up's
	for range maxPassesPerWake {
		full = full || s.running == nil
		s.tally = passTally{}
		res, err := s.pass(ctx, full)
		if s.OnPass != nil {
			s.OnPass(s.tally.runsCreated, s.tally.queued)
		}
		if err != nil {
			s.running = nil // the next pass is whole
			s.busy = false  // and no end's light pass waits for it
			return s.Clock.Now().Add(s.Config.PollInterval), err
		}
		if !res.again {
			return res.next, nil
		}
		full = full || res.full
	}
	return s.Clock.Now(), nil
}

// While the workers claim from a backlog of queued work, the light passes
// that tries' ends ask for are spaced (ADR 0034): an end within
// lightPassGap of the end of the last wake-up's passes waits for the gap's
// end, so that the ends of a wide run share a pass (which refills their
// slots together) instead of paying one each. Without such a backlog
// (backlogBusy) a light pass runs at once: the end that frees the only
// slot of a small pool, or a chain's step the scheduler decides, waits for
// nothing.
const (
	// busyBacklog is the smallest backlog of a queue (queued instances no
	// worker has claimed) a gap waits behind: more than the ends of one
	// gap at the ~2,000 tries a second one SQLite database ends (40).
	busyBacklog = 64
	// lightPassGap is the least time between light passes during a
	// backlog.
	lightPassGap = 20 * time.Millisecond
)

// lightDelay is how long the light pass a try's end asks for waits: until
// lightPassGap after the end of the last wake-up when its queueing found
// the workers busy with a backlog (a figure up to lightPassGap old), else
// not at all.
func (s *Scheduler) lightDelay() time.Duration {
	s.passMu.Lock()
	defer s.passMu.Unlock()
	if !s.busy {
		return 0
	}
	return time.Until(s.lastPass.Add(lightPassGap))
}

// passResult says whether another pass is due at once (and whether it
// must be whole), and otherwise when the next one is.
type passResult struct {
	again bool
	full  bool
	next  time.Time
	// jobs are the job rows this pass read (apiUptime), for its other
	// check that needs them.
	jobs *jobsRead
}

// passTally counts what one pass did, for OnPass.
type passTally struct {
	runsCreated, queued int
}

// earliest lowers r.next to t.
func (r *passResult) earliest(t time.Time) {
	if t.Before(r.next) {
		r.next = t
	}
}

// pass is one scheduling pass: dead workers, scheduled runs, queued runs,
// running runs, then queueing.
//
// A light pass (full false) skips what only a run's creation or end, a
// DAG's change or time can call for (listing DAGs, creating runs, starting
// queued ones, completing backfills): it decides the runs the last whole
// pass found running, with the pause flags it read, then queues. A try's
// end wakes one (ChannelTasks); everything else, and the timer, wakes a
// whole pass, and a light pass that finishes a run asks for one.
func (s *Scheduler) pass(ctx context.Context, full bool) (passResult, error) {
	now := s.Clock.Now()
	res := passResult{next: now.Add(s.Config.PollInterval)}
	if err := s.checkStale(ctx, now, &res); err != nil {
		return res, err
	}
	if err := s.checkDeadWorkers(ctx, now, &res); err != nil {
		return res, err
	}
	if err := s.timeOutDeferred(ctx, now, &res); err != nil {
		return res, err
	}
	if full {
		if err := s.wholePass(ctx, now, &res); err != nil {
			return res, err
		}
	} else {
		res.earliest(s.wholeNext)
	}
	processed := make(map[int64]bool, len(s.running))
	for i := range s.running {
		run := &s.running[i]
		if s.paused.holds(run.DagID) {
			continue
		}
		processed[run.ID] = true
		if err := s.processRun(ctx, run, now, &res); err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			// One broken run must not stall the others.
			s.Logger.Error("schedule dag run", "dag_id", run.DagID, "run_id", run.RunID, "err", err)
		}
	}
	s.forget(processed)
	if full {
		if err := s.completeBackfills(ctx); err != nil {
			return res, err
		}
		s.wholeNext = res.next
	}
	if err := s.queueScheduled(ctx, full); err != nil {
		return res, err
	}
	return res, nil
}

// completeBackfills marks complete the backfills whose runs have all
// ended; it returns only ctx's error. A confined scheduler leaves them to
// the deployment's: a test's run is no backfill's.
func (s *Scheduler) completeBackfills(ctx context.Context) error {
	if s.Config.OnlyDagID != "" {
		return nil
	}
	if _, err := s.Service.CompleteBackfills(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.Logger.Error("complete backfills", "err", err)
	}
	return nil
}

// wholePass is the part of a whole pass before the running runs are
// decided: it reads the DAGs' pause flags, creates the runs that are due
// and starts queued ones, and keeps the running runs for the light passes
// that follow.
func (s *Scheduler) wholePass(ctx context.Context, now time.Time, res *passResult) error {
	dags, err := s.Store.DagList(ctx, &store.DagListParams{OnlyActive: true})
	if err != nil {
		return fmt.Errorf("list dags: %w", err)
	}
	paused := held{only: s.Config.OnlyDagID, paused: make(map[string]bool, len(dags))}
	for i := range dags {
		paused.paused[dags[i].DagID] = dags[i].IsPaused
	}
	if s.Config.OnlyDagID == "" {
		if err := s.createScheduledRuns(ctx, dags, now, res); err != nil {
			return err
		}
		if err := s.createAssetRuns(ctx, dags); err != nil {
			return err
		}
		if err := s.createPartitionRuns(ctx, dags, now, res); err != nil {
			return err
		}
	}
	running, err := s.startQueuedRuns(ctx, paused, now)
	if err != nil {
		return err
	}
	s.paused, s.running = paused, running
	return nil
}

func (s *Scheduler) init() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.graphs != nil {
		return
	}
	if s.Clock == nil {
		s.Clock = core.SystemClock{}
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.Service == nil {
		full, ok := s.Store.(store.Store)
		if !ok {
			panic("scheduler: Scheduler.Service is required when Store is not a whole store.Store")
		}
		s.Service = service.New(service.Config{Store: full, Clock: s.Clock, Logger: s.Logger, OnlyDagID: s.Config.OnlyDagID})
	}
	c := &s.Config
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.HeartbeatTimeout <= 0 {
		c.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if c.CallbackMaxAttempts <= 0 {
		c.CallbackMaxAttempts = DefaultCallbackMaxAttempts
	}
	if c.SlowWakeUp <= 0 {
		c.SlowWakeUp = DefaultSlowWakeUp
	}
	if c.StaleCheckInterval <= 0 {
		c.StaleCheckInterval = c.HeartbeatTimeout / 4
	}
	if c.WorkerCheckInterval <= 0 {
		c.WorkerCheckInterval = 2500 * time.Millisecond
	}
	if c.APIServerHeartbeatInterval <= 0 {
		c.APIServerHeartbeatInterval = job.DefaultInterval
	}
	if c.MaxRunsToCreatePerLoop <= 0 {
		c.MaxRunsToCreatePerLoop = DefaultMaxRunsToCreatePerLoop
	}
	if c.MaxMapLength <= 0 {
		c.MaxMapLength = DefaultMaxMapLength
	}
	s.graphs = map[int64]*graph{}
	s.views = map[int64]*runView{}
	s.exhausted = map[string]int64{}
}

// graph returns the compiled spec of a DAG version, loading it once.
func (s *Scheduler) graph(ctx context.Context, versionID int64) (*graph, error) {
	s.mu.Lock()
	g, ok := s.graphs[versionID]
	s.mu.Unlock()
	if ok {
		return g, nil
	}
	v, err := s.Store.DagVersionGet(ctx, versionID)
	if err != nil {
		return nil, fmt.Errorf("load dag version %d: %w", versionID, err)
	}
	g = compile(&v.Spec)
	s.mu.Lock()
	if len(s.graphs) > 4096 { // bound memory; versions are cheap to reload
		clear(s.graphs)
	}
	s.graphs[versionID] = g
	s.mu.Unlock()
	return g, nil
}

// benign reports whether err only means another scheduler (or an operator)
// got there first.
func benign(err error) bool {
	return errors.Is(err, core.ErrConflict) || errors.Is(err, core.ErrNotFound)
}

// orDefault returns v, or def when v is not positive.
func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// held says which DAGs' runs the scheduler leaves alone: paused DAGs, or,
// with Config.OnlyDagID, every other DAG (the only DAG runs even if paused).
type held struct {
	only   string
	paused map[string]bool
}

func (h held) holds(dagID string) bool {
	if h.only != "" {
		return dagID != h.only
	}
	return h.paused[dagID]
}

// Store is what the scheduler needs of the store (package store documents each
// method); *sqlstore.Store and every store.Store satisfy it.
type Store interface {
	CallbackRequeueStale(ctx context.Context, p *store.CallbackStaleParams) (requeued, failed int, err error)
	AssetQueueConsume(ctx context.Context, dagID string, dagRunID int64) ([]core.AssetEvent, error)
	AssetQueueReady(ctx context.Context) ([]string, error)
	AssetPartitionReady(ctx context.Context, limit int) ([]store.AssetRunGroup, error)
	DagList(ctx context.Context, p *store.DagListParams) ([]core.DagModel, error)
	BackfillList(ctx context.Context, p *store.BackfillListParams) ([]core.Backfill, error)
	DagRunCount(ctx context.Context, p *store.DagRunListParams) (int, error)
	DagRunCreate(ctx context.Context, p *store.DagRunCreateParams) (*core.DagRun, error)
	DagRunLatestScheduled(ctx context.Context, dagID string) (*core.DagRun, error)
	DagRunList(ctx context.Context, p *store.DagRunListParams) ([]core.DagRun, error)
	DagRunSetState(ctx context.Context, p *store.DagRunSetStateParams) (bool, error)
	DagSetNextRunAfter(ctx context.Context, dagID string, at *time.Time) error
	DagVersionGet(ctx context.Context, id int64) (*core.DagVersion, error)
	JobList(ctx context.Context) ([]core.Job, error)
	Notify(ctx context.Context, channel string) error
	PoolList(ctx context.Context, p *store.PoolListParams) ([]core.Pool, error)
	Subscribe(ctx context.Context, channel string) <-chan struct{}
	TaskInstanceActiveCounts(ctx context.Context) (*store.ActiveCounts, error)
	TaskInstanceExpand(ctx context.Context, p *store.TaskInstanceExpandParams) error
	TaskInstanceIterate(ctx context.Context, p *store.TaskInstanceIterateParams) error
	StreamGet(ctx context.Context, id string) (*core.Stream, error)
	StreamClose(ctx context.Context, p *store.StreamCloseParams) (*core.Stream, error)
	StreamEventList(ctx context.Context, p *store.StreamEventListParams) ([]core.StreamEvent, error)
	TaskInstanceList(ctx context.Context, p *store.TaskInstanceListParams) ([]core.TaskInstance, error)
	TaskInstanceStates(ctx context.Context, p *store.TaskInstanceListParams) ([]store.TaskInstanceState, error)
	TaskInstanceNewTry(ctx context.Context, p *store.TaskInstanceNewTryParams) error
	TaskInstanceSetState(ctx context.Context, p *store.TaskInstanceSetStateParams) ([]string, error)
	TaskInstanceStale(ctx context.Context, before time.Time) ([]core.TaskInstance, error)
	TaskInstanceStaleOfWorker(ctx context.Context, workerID string, before time.Time) ([]core.TaskInstance, error)
	WithQueueLock(ctx context.Context, fn func(tx store.Store) error) error
	XComGet(ctx context.Context, dagID, runID, taskID string, mapIndex int, key string) (*core.XCom, error)
	XComList(ctx context.Context, p *store.XComListParams) ([]core.XCom, error)
}
