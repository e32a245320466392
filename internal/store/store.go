// Package store defines Weir's storage seam: one Store interface, with
// Noun+Verb methods taking parameter structs, implemented by the SQLite and
// PostgreSQL adapters and verified by one conformance suite (storetest).
//
// Adapters translate driver errors into core.ErrNotFound and
// core.ErrConflict; callers never see a driver error type.
package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// Store is everything Weir persists. Every method is safe for concurrent use.
type Store interface {
	DagStore
	DagRunStore
	TaskInstanceStore
	XComStore
	StateStore
	StateObjects
	AuthStore
	MiscStore
	AssetStore
	AssetAliasStore
	TriggerStore
	WatcherStore
	StreamStore
	CallbackStore
	BackfillStore
	DagInfoStore

	// WithTx runs fn in one transaction: every Store call made on tx commits
	// together, or none does when fn returns an error.
	WithTx(ctx context.Context, fn func(tx Store) error) error
	// WithQueueLock runs fn in one transaction while no other process or
	// transaction queues task instances, so that pool and concurrency
	// limits computed in fn hold across schedulers and the try ends that
	// queue their successors (TryQueueLock).
	WithQueueLock(ctx context.Context, fn func(tx Store) error) error
	// TryQueueLock, on a Store bound to a transaction (WithTx), takes the
	// queueing lock for the rest of the transaction when no one else
	// holds it; it never waits for it. held reports whether it did: on
	// PostgreSQL the lock's statement goes, with what the transaction's
	// store may still send (Unread updates), with the transaction's next
	// statement, one round trip (held sends it when none did yet). Call
	// held before acting on the lock: what ran before held said yes may
	// have run without it (reads only, then).
	TryQueueLock(ctx context.Context) (held func() (bool, error), err error)
	// Notify wakes every subscriber of channel, in this process and (on
	// PostgreSQL) in every other process sharing the database. Sent after
	// commit when called inside WithTx; other processes are told without
	// the caller waiting (ADR 0028).
	Notify(ctx context.Context, channel string) error
	// Subscribe returns a channel that receives a value (coalesced) whenever
	// channel is notified, until ctx is done.
	Subscribe(ctx context.Context, channel string) <-chan struct{}
	// Dialect names the engine: "sqlite" or "postgres".
	Dialect() string
	// RoundTrip returns the median time of n pings of the database.
	RoundTrip(ctx context.Context, n int) (time.Duration, error)
	Close() error
}

// Notification channels.
const (
	ChannelScheduler = "weir_scheduler" // a run was created, finished or changed, a DAG or asset changed: schedule now
	ChannelTasks     = "weir_tasks"     // a try of a task without outlets ended: schedule its run's next tasks
	ChannelQueued    = "weir_queued"    // task instances were queued: workers, claim now
	ChannelCallbacks = "weir_callbacks" // fired callbacks were queued: workers' callback loops, claim now
	ChannelTrigger   = "weir_trigger"   // a trigger was created: triggerers, claim now
	ChannelStream    = "weir_stream"    // stream events were appended or consumed: waiting producers and consumers, look
)

// DagStore holds DAG definitions and their versions.
type DagStore interface {
	// DagSync records a parsed DAG: creates the dag row if missing (paused
	// per Paused for a new DAG), marks it active, and adds a dag_version when
	// Hash differs from the latest version's. Returns the latest version id
	// and what changed.
	DagSync(ctx context.Context, p *DagSyncParams) (versionID int64, change DagSyncChange, err error)
	DagGet(ctx context.Context, dagID string) (*core.DagModel, error)
	// DagList lists DAGs in p.OrderBy order (store.DagOrder); DagCount
	// counts them with the same filters.
	DagList(ctx context.Context, p *DagListParams) ([]core.DagModel, error)
	DagCount(ctx context.Context, p *DagListParams) (int, error)
	DagSetPaused(ctx context.Context, dagID string, paused bool) error
	// DagDelete removes a DAG's row and, by cascade, its versions, runs,
	// task instances and their history, XCom, task state, backfills,
	// warnings, asset links and queued asset events; ErrNotFound when
	// absent. Asset events it emitted and the audit log stay.
	DagDelete(ctx context.Context, dagID string) error
	// DagRunDelete removes the run with this id and, by cascade, its task
	// instances and their history, XComs, task state and consumed events;
	// ErrNotFound when there is none.
	DagRunDelete(ctx context.Context, id int64) error
	// DagSetNextRunAfter records when the scheduler should next look at the
	// DAG's schedule (nil = never).
	DagSetNextRunAfter(ctx context.Context, dagID string, at *time.Time) error
	// DagDeactivateMissing marks inactive every active DAG whose fileloc is
	// under one of Filelocs' owners but whose id is not in Keep.
	DagDeactivateMissing(ctx context.Context, p *DagDeactivateParams) error
	DagVersionGet(ctx context.Context, id int64) (*core.DagVersion, error)
	DagVersionLatest(ctx context.Context, dagID string) (*core.DagVersion, error)

	// ImportErrorSet records (or replaces) the error of one file;
	// ImportErrorDelete removes it once the file loads again.
	ImportErrorSet(ctx context.Context, filename, message string, at time.Time) error
	ImportErrorDelete(ctx context.Context, filename string) error
	// ImportErrorGet returns one import error by id, or ErrNotFound.
	ImportErrorGet(ctx context.Context, id int64) (*core.ImportError, error)
	// ImportErrorList lists import errors (store.ImportErrorOrder);
	// ImportErrorCount counts them.
	ImportErrorList(ctx context.Context, p *ImportErrorListParams) ([]core.ImportError, error)
	ImportErrorCount(ctx context.Context, p *ImportErrorListParams) (int, error)

	// DagFileSet records (or replaces) what the last parse of one DAG file
	// gave; DagFileList lists every file's, by path; DagFileGet returns
	// one file's (core.ErrNotFound when none is recorded); DagFileDelete
	// removes one (no error when absent).
	DagFileSet(ctx context.Context, f *DagFile) error
	DagFileList(ctx context.Context, p *DagFileListParams) ([]DagFile, error)
	DagFileGet(ctx context.Context, fileloc string) (*DagFile, error)
	DagFileDelete(ctx context.Context, fileloc string) error

	// DagWarningSet records (or replaces) a DAG's warning of one type;
	// DagWarningDelete removes it (no error when absent).
	DagWarningSet(ctx context.Context, w *core.DagWarning) error
	DagWarningDelete(ctx context.Context, dagID, warningType string) error
	// DagWarningList lists DAG warnings (store.DagWarningOrder);
	// DagWarningCount counts them with the same filters.
	DagWarningList(ctx context.Context, p *DagWarningListParams) ([]core.DagWarning, error)
	DagWarningCount(ctx context.Context, p *DagWarningListParams) (int, error)
}

// DagFile is what one parse of a DAG file gave, kept so that a process
// parses the same bytes with the same parser once (docs/dag-files.md#parsing-once).
type DagFile struct {
	Fileloc  string    // the file's path
	Parser   string    // the parser that gave it: the build and its trigger types
	Sum      string    // hex SHA-256 of the bytes parsed
	DagIDs   []string  // ids of the DAGs the file defines, in order, when Error is ""
	DAGs     string    // JSON of the []core.DAG the file defines, when Error is ""
	Error    string    // why the file does not load, or ""
	ParsedAt time.Time // when it was parsed
}

// DagFileListParams shapes DagFileList (nil: every field of every file).
type DagFileListParams struct {
	// NoDAGs leaves each file's DAGs empty: a process that needs the DAGs
	// of one file (`weir dags test`) reads that file's with DagFileGet
	// rather than every file's JSON.
	NoDAGs bool
}

// DagWarningListParams filters and pages DagWarningList.
type DagWarningListParams struct {
	DagID       string // "" = every DAG
	WarningType string // "" = every type
	Page
}

// ImportErrorListParams pages ImportErrorList.
type ImportErrorListParams struct {
	Page
}

// DagSyncParams describes one parsed DAG.
type DagSyncParams struct {
	Spec   core.DAG
	Hash   string // stable hash of the serialized spec
	Paused bool   // initial pause state of a new DAG
	Now    time.Time
	// Deriver names what derives the DAG's asset references and warnings
	// from its spec in this sync (the DAG processor's Parser: the program's
	// build and loader options), recorded with the DAG; "" = unnamed,
	// never the same as another.
	Deriver string
}

// DagSyncChange says what a DagSync found, and so whether what a DAG's
// spec derives (its asset references, its warnings) needs writing again.
type DagSyncChange int

const (
	// DagNewVersion says a version was added (a new DAG's first included).
	DagNewVersion DagSyncChange = iota + 1
	// DagRederive says its latest version already had the hash, but what the
	// spec derives is to be written again: the DAG was inactive, or another
	// (or an unnamed) Deriver synced it last.
	DagRederive
	// DagUnchanged says the DAG was active, its latest version already had
	// the hash and the same Deriver synced it last, so everything the spec
	// derives was written with it.
	DagUnchanged
)

// DagListParams filters DagList and DagCount.
type DagListParams struct {
	OnlyActive bool
	DagIDs     []string // empty = all
	Paused     *bool    // nil = paused and unpaused
	// Search keeps DAGs whose id contains it, ignoring ASCII case
	// ("" = all).
	Search string
	// Tags keeps DAGs that have one of these tags (AllTags: every one of
	// them), each matched exactly (none = all).
	Tags    []string
	AllTags bool
	Page
}

// DagDeactivateParams says which DAGs are still defined.
type DagDeactivateParams struct {
	Keep []string // dag ids still defined
}

// DagRunStore holds DAG runs.
type DagRunStore interface {
	// DagRunCreate inserts a run and its initial task instances (state none)
	// in one transaction. ErrConflict when (dag_id, run_id) exists.
	DagRunCreate(ctx context.Context, p *DagRunCreateParams) (*core.DagRun, error)
	DagRunGet(ctx context.Context, dagID, runID string) (*core.DagRun, error)
	DagRunGetByID(ctx context.Context, id int64) (*core.DagRun, error)
	// DagRunGetPausedWithTasks reads, in one statement, the run's instances
	// of taskIDs (by task and map index), the run, and whether its DAG is
	// paused (true when it has no row): what a try's end reads before it
	// schedules in the run. The run is nil, and no error, when it has none
	// of those instances. It returns the read: in a transaction on an
	// engine that pipelines statements (PostgreSQL), the statement goes
	// with the transaction's next one and read waits for it (sending it
	// when nothing did yet); elsewhere it ran before the method returned.
	DagRunGetPausedWithTasks(ctx context.Context, id int64, taskIDs []string) (read func() (RunWithTasks, error))
	// DagRunList lists runs (store.DagRunOrder, newest first by default);
	// DagRunCount counts them with the same filters.
	DagRunList(ctx context.Context, p *DagRunListParams) ([]core.DagRun, error)
	DagRunCount(ctx context.Context, p *DagRunListParams) (int, error)
	// DagRunSetState moves a run to state when its current state is one of
	// From (any when empty); sets start/end dates as the state implies.
	// Returns false when the run was not in an allowed state.
	DagRunSetState(ctx context.Context, p *DagRunSetStateParams) (bool, error)
	// DagRunEndTest ends what the `weir dags test` process running run
	// p.ID held (core.DagRun.TestJobID): the run's callbacks not ended
	// (queued or running) fail with p.Error, and the run is a test's no
	// more, the deployment's claims then taking what it fires. It returns
	// how many callbacks it failed: none, and no error, for a run that is
	// no test's.
	DagRunEndTest(ctx context.Context, p *DagRunEndTestParams) (failed int, err error)
	// DagRunLatestScheduled returns the scheduled/backfill run with the
	// greatest logical date, or ErrNotFound.
	DagRunLatestScheduled(ctx context.Context, dagID string) (*core.DagRun, error)
	// DagRunPreviousSuccess returns the successful run of dagID with the
	// greatest logical date before before (Airflow's previous successful
	// dag run, of any run type), or ErrNotFound.
	DagRunPreviousSuccess(ctx context.Context, dagID string, before time.Time) (*core.DagRun, error)
	// DagRunCountByState counts a DAG's runs per state.
	DagRunCountByState(ctx context.Context, dagID string) (map[core.DagRunState]int, error)
	// DagRunRecent returns, for each of DagIDs, its PerDag newest runs (by
	// id), oldest first within a DAG, in one query: the web UI's "last
	// runs" squares for a page of DAGs.
	DagRunRecent(ctx context.Context, p *DagRunRecentParams) ([]core.DagRun, error)
}

// DagRunEndTestParams ends a test's run (DagRunEndTest).
type DagRunEndTestParams struct {
	ID    int64
	Error string // why a callback still queued or running failed
	Now   time.Time
}

// DagRunRecentParams selects DagRunRecent's runs.
type DagRunRecentParams struct {
	DagIDs []string // empty = none
	PerDag int      // runs per DAG; at least 1
}

// DagRunCreateParams describes a new run.
type DagRunCreateParams struct {
	DagID             string
	RunID             string
	RunType           core.RunType
	State             core.DagRunState // normally queued
	LogicalDate       *time.Time
	DataIntervalStart *time.Time
	DataIntervalEnd   *time.Time
	Conf              json.RawMessage
	DagVersionID      int64
	Now               time.Time
	TaskInstances     []NewTaskInstance
	// PartitionKey is the partition the run is for (nil = none).
	PartitionKey *string
	// BackfillID is the backfill the run belongs to (nil = none).
	BackfillID *int64
	// TestJobID is core.DagRun.TestJobID ("" = none).
	TestJobID string
}

// NewTaskInstance seeds one task instance row.
type NewTaskInstance struct {
	ID             string // UUID of the first try
	TaskID         string
	MapIndex       int
	MaxTries       int
	Queue          string
	Pool           string
	PoolSlots      int
	PriorityWeight int
	Operator       string
	MapArgs        json.RawMessage
	State          core.TIState // normally none
}

// DagRunListParams filters DagRunList and DagRunCount.
type DagRunListParams struct {
	DagID    string             // "" = all DAGs
	DagIDs   []string           // these DAGs only (empty = all)
	IDs      []int64            // these runs only (empty = all)
	States   []core.DagRunState // empty = all
	RunTypes []core.RunType     // empty = all
	// LogicalDateGTE and LogicalDateLTE keep the runs whose logical date
	// is in the range, both ends included (nil = unbounded); a run with
	// no logical date is kept only when both are nil.
	LogicalDateGTE, LogicalDateLTE *time.Time
	// StartDate, EndDate and RunAfter keep the runs whose start, end or
	// run_after (the logical date, else when it was queued) is in range;
	// a run without a start or an end is kept only by an unbounded range.
	StartDate, EndDate, RunAfter TimeRange
	// RunIDSearch keeps the runs whose id contains it, ignoring case.
	RunIDSearch string
	// BackfillID keeps the runs of one backfill (0 = any run).
	BackfillID int64
	// Tests keeps the runs a `weir dags test` process runs (TestJobID set).
	Tests bool
	Page
}

// TimeRange bounds a time, both ends included (nil = unbounded).
type TimeRange struct{ GTE, LTE *time.Time }

// DagRunSetStateParams is a conditional state change.
type DagRunSetStateParams struct {
	ID   int64
	From []core.DagRunState
	To   core.DagRunState
	Now  time.Time
}

// TaskInstanceStore holds task instances, their history and the queue.
type TaskInstanceStore interface {
	TaskInstanceGet(ctx context.Context, id string) (*core.TaskInstance, error)
	// TaskInstanceGetByKey finds the current try of (dag, run, task, map index).
	TaskInstanceGetByKey(ctx context.Context, dagID, runID, taskID string, mapIndex int) (*core.TaskInstance, error)
	// TaskInstanceList lists current tries (store.TaskInstanceOrder);
	// TaskInstanceCount counts them with the same filters.
	TaskInstanceList(ctx context.Context, p *TaskInstanceListParams) ([]core.TaskInstance, error)
	// TaskInstanceStates lists the id and state of the tries
	// TaskInstanceList would list (unordered; at most p.Limit when set,
	// the rest of p.Page ignored): what the scheduler reads first to find
	// which of a run's recently changed rows it must read whole, and to
	// learn whether a run has a try in some states at all.
	TaskInstanceStates(ctx context.Context, p *TaskInstanceListParams) ([]TaskInstanceState, error)
	// TaskInstanceStateCounts counts the current tries of the given runs
	// per (run, task, state), with each group's earliest start and latest
	// end: a grid of runs × tasks in one query, however many map indices a
	// task has; only of the tasks taskIDs names when it names any. Ordered
	// by run id, task id, state.
	TaskInstanceStateCounts(ctx context.Context, dagRunIDs []int64, taskIDs ...string) ([]TaskInstanceStateCount, error)
	// TaskInstanceTotals counts the current tries of every run per queue
	// and state (state "" = not yet scheduled), ordered by queue and state:
	// one grouped query, for metrics.
	TaskInstanceTotals(ctx context.Context) ([]TaskInstanceTotal, error)
	TaskInstanceCount(ctx context.Context, p *TaskInstanceListParams) (int, error)
	// TaskInstanceSetState moves each listed instance to To when its state is
	// one of From (any when empty) and returns the ids that moved. Moving to
	// queued clears a worker's claim (the scheduler returns a dead worker's
	// claims this way); moving to up_for_retry stores NextRetryAt. With
	// Unread it returns no ids, and in a transaction the store may send the
	// update with the transaction's next statement (its failure is then
	// that statement's).
	TaskInstanceSetState(ctx context.Context, p *TaskInstanceSetStateParams) ([]string, error)
	// TaskInstanceExpand replaces a mapped task's placeholder (map_index -1)
	// with one instance per element, or marks it skipped when there are none.
	TaskInstanceExpand(ctx context.Context, p *TaskInstanceExpandParams) error
	// TaskInstanceIterate creates the instances of a task mapped over a
	// stream for the stream's envelopes p.From..p.Through (map_index =
	// sequence index) and marks those envelopes consumed, in one
	// transaction; with p.Close it then deletes the task's placeholder.
	// ErrNotFound when the placeholder is gone (state none is required),
	// ErrConflict when an instance exists already or an envelope was
	// consumed before: nothing changes then.
	TaskInstanceIterate(ctx context.Context, p *TaskInstanceIterateParams) error
	// TaskInstanceNewTry archives the current try to history and starts the
	// next one under NewID with try_number+1 and state To (scheduled for a
	// retry, none for a clear). ExtraTries raises max_tries (for clears).
	TaskInstanceNewTry(ctx context.Context, p *TaskInstanceNewTryParams) error
	// TaskInstanceClaim atomically assigns up to Limit queued, unclaimed
	// instances of Queues to a worker (highest priority first) and returns
	// them. Two concurrent claimers never receive the same instance.
	TaskInstanceClaim(ctx context.Context, p *TaskInstanceClaimParams) ([]core.TaskInstance, error)
	// TaskInstanceStart moves a queued instance claimed by WorkerID to
	// running. ErrConflict (with the current state) otherwise.
	TaskInstanceStart(ctx context.Context, p *TaskInstanceStartParams) (*core.TaskInstance, error)
	// TaskInstanceHeartbeat records liveness of a running instance;
	// ErrConflict when it is no longer running.
	TaskInstanceHeartbeat(ctx context.Context, id string, at time.Time) error
	// TaskInstanceTakeBack moves a try that is up_for_retry because it was
	// failed over for missed heartbeats (FailedOver) back to running, its retry time
	// and end date cleared and its heartbeat set to at, when its worker
	// heartbeats again before the retry began; ErrConflict when it is not
	// up_for_retry, ErrNotFound when a new try replaced it.
	TaskInstanceTakeBack(ctx context.Context, id string, at time.Time) error
	// TaskInstanceFinish moves a running instance (or one in p.From) to a
	// terminal state or up_for_retry; ErrConflict when it is not in that
	// state.
	TaskInstanceFinish(ctx context.Context, p *TaskInstanceFinishParams) error
	// TaskInstanceFinishLater is TaskInstanceFinish in a transaction whose
	// engine pipelines statements (PostgreSQL): the update goes with the
	// transaction's next statement, and check — called before the
	// transaction commits — returns what TaskInstanceFinish would have,
	// sending the update first if nothing carried it. Elsewhere, and for
	// an end that records more with it (task state cleared, outlet
	// events), it is TaskInstanceFinish and check returns its error.
	TaskInstanceFinishLater(ctx context.Context, p *TaskInstanceFinishParams) (check func() error, err error)
	// TaskInstanceHistory returns earlier tries, oldest first.
	TaskInstanceHistory(ctx context.Context, dagID, runID, taskID string, mapIndex int) ([]core.TaskInstance, error)
	// TaskInstanceArchived returns the earlier try whose id is id (a retry
	// or a clear archived it; core.ErrNotFound: none).
	TaskInstanceArchived(ctx context.Context, id string) (*core.TaskInstance, error)
	// TaskInstanceStale lists running instances whose heartbeat (or start)
	// is older than Before, and queued claims older than Before.
	TaskInstanceStale(ctx context.Context, before time.Time) ([]core.TaskInstance, error)
	// TaskInstanceStaleOfWorker is TaskInstanceStale for the tries whose
	// worker_id is workerID.
	TaskInstanceStaleOfWorker(ctx context.Context, workerID string, before time.Time) ([]core.TaskInstance, error)
	// TaskInstanceActiveCounts counts queued+running instances per pool
	// (slots) and per DAG.
	TaskInstanceActiveCounts(ctx context.Context) (*ActiveCounts, error)
	// QueueingReads is what a queueing pass starts from, in one statement:
	// TaskInstanceActiveCounts, with withPools PoolList too (every pool, no
	// occupancy), and the first page of the instances first lists, in
	// TaskInstanceList's OrderByPriority order (first.OrderByPriority is
	// implied).
	QueueingReads(ctx context.Context, withPools bool, first *TaskInstanceListParams) ([]core.Pool, *ActiveCounts, []core.TaskInstance, error)
}

// TaskInstanceListParams filters TaskInstanceList and TaskInstanceCount.
type TaskInstanceListParams struct {
	DagRunID int64  // 0 = any
	DagID    string // "" = any
	RunID    string // "" = any
	TaskID   string // "" = any
	// TaskIDs keeps the instances of these tasks only (empty = any);
	// DagIDs those of these DAGs, RunIDs those of runs with these ids.
	TaskIDs, DagIDs, RunIDs []string
	// IDs keeps these tries only (empty = any).
	IDs []string
	// MapIndex keeps the instances with this map index (nil = any);
	// Mapped keeps a mapped task's (map_index >= 0).
	MapIndex *int
	Mapped   bool
	States   []core.TIState // empty = all
	// ExceptDagIDs and ExceptPools leave out the instances of these DAGs
	// and of these pools.
	ExceptDagIDs, ExceptPools []string
	// Pools, Queues and Operators keep the instances of these pools, queues
	// and operators (empty = any).
	Pools, Queues, Operators []string
	// StartDate and EndDate keep the tries whose start or end is in range
	// (a try not started or not ended is left out by a bounded range).
	StartDate, EndDate TimeRange
	// TriggerID keeps the tries deferred on this trigger (0 = any).
	TriggerID int64
	// UpdatedSince keeps the instances whose updated_at (stamped by every
	// change of state, claim or try) is at or after it (zero = any): the
	// scheduler's incremental read of a run.
	UpdatedSince time.Time
	// OrderByPriority orders by priority_weight (highest first), then
	// dag_run_id, map_index and task_id: the scheduler's queueing order
	// (Page.OrderBy is then ignored). The default order is dag_run_id,
	// task_id, map_index.
	OrderByPriority bool
	// Unordered returns rows in whatever order the engine finds cheapest
	// (existence checks with Limit 1 then use the (dag_run_id, state)
	// index instead of walking the run in key order).
	Unordered bool
	Page
}

// TaskInstanceState is a try's id and state (TaskInstanceStates).
type TaskInstanceState struct {
	ID    string
	State core.TIState
}

// TaskInstanceTotal is one group of TaskInstanceTotals.
type TaskInstanceTotal struct {
	Queue string
	State core.TIState
	Count int
}

// TaskInstanceStateCount is one group of TaskInstanceStateCounts.
type TaskInstanceStateCount struct {
	DagRunID int64
	TaskID   string
	State    core.TIState
	Count    int
	// Mapped is true when the group's instances have map indices.
	Mapped bool
	// FirstStart and LastEnd span the group's tries (nil when none
	// started, or none ended).
	FirstStart, LastEnd *time.Time
}

// TaskInstanceSetStateParams is a conditional bulk state change.
type TaskInstanceSetStateParams struct {
	IDs         []string
	From        []core.TIState
	To          core.TIState
	Now         time.Time
	NextRetryAt *time.Time // with up_for_retry
	Unread      bool       // the ids that moved are not needed (TaskInstanceSetState)
}

// TaskInstanceExpandParams expands one mapped task in one run.
type TaskInstanceExpandParams struct {
	DagRunID  int64
	TaskID    string
	Instances []NewTaskInstance // MapIndex 0..n-1; empty = skip the task
	Now       time.Time
}

// TaskInstanceIterateParams creates the next instances of a task mapped
// over a stream (docs/streaming.md#lazy-expansion).
type TaskInstanceIterateParams struct {
	DagRunID int64
	TaskID   string
	StreamID string
	// Instances have map indexes From..Through in order (none when only
	// closing).
	Instances     []NewTaskInstance
	From, Through int64
	// Close deletes the placeholder: the expansion is complete.
	Close bool
	Now   time.Time
}

// TaskInstanceNewTryParams starts the next try of an instance.
type TaskInstanceNewTryParams struct {
	ID         string
	NewID      string
	To         core.TIState
	ExtraTries int
	Now        time.Time
	// From, when set, is the state the current try must be in (the
	// scheduler retries only an up_for_retry try: one its worker took back
	// meanwhile is left alone); ErrConflict otherwise. "" = any state.
	From core.TIState
}

// WorkerHeartbeatParams is one worker heartbeat.
type WorkerHeartbeatParams struct {
	Job     core.Job // role "worker", WorkerID set, Heartbeat = now
	Holding []string // ids of the tries the worker holds
}

// TaskInstanceClaimParams asks for work.
type TaskInstanceClaimParams struct {
	WorkerID string
	Queues   []string
	Limit    int
	Now      time.Time
	// Reclaim also returns, first, the queued instances already claimed
	// by WorkerID but not started, except those in Holding (the tries the
	// worker knows it has): a claim whose answer was lost (its api-server
	// died) reaches its worker instead of waiting out the heartbeat
	// timeout. They count against Limit and are claimed again (claimed_at).
	Reclaim bool
	// Holding lists the ids of the tries the worker holds (with Reclaim).
	Holding []string
	// Hostname and PID, with Reclaim, also return first the worker's
	// running tries that this process started (hostname and pid as
	// recorded at the start) and does not hold: a claim that started its
	// tries and whose answer was lost. They are returned as they are
	// (running), not claimed again; PID 0 = none.
	Hostname string
	PID      int
	// Start starts every try the statement claims for the process
	// Hostname and PID, as TaskInstanceStart would, in the same statement
	// (they are returned running), and then calls Started, if set, with
	// them (not with the running tries a reclaim returns as they are): run
	// in a transaction, it fires their on_execute callbacks with the start
	// (service.ClaimTries).
	Start   bool
	Started func(started []core.TaskInstance) error
	// Runs, when not nil, gets the run of every try returned that it does
	// not hold yet, keyed by id (on PostgreSQL read by the claim's own
	// statement): a caller that answers with the tries' workloads need
	// not read them again.
	Runs map[int64]*core.DagRun
	// DagRunID, when not 0, takes that run's instances only (its reclaims
	// too): a worker confined to one run, `weir dags test`'s.
	DagRunID int64
}

// TaskInstanceStartParams starts a claimed try.
type TaskInstanceStartParams struct {
	ID       string
	WorkerID string
	Hostname string
	PID      int
	Now      time.Time
}

// TaskInstanceFinishParams ends a running try.
type TaskInstanceFinishParams struct {
	ID    string
	State core.TIState // success, failed, skipped, up_for_retry
	// From is the state the try must be in: "" = running; up_for_retry
	// for the late report of a try failed over (FailedOver) for missed
	// heartbeats, which ErrConflict refuses for any other up_for_retry try.
	From core.TIState
	// RefundTry, with state up_for_retry, adds one to the instance's
	// max_tries and to its interruptions: the try ending does not count
	// against its retries (its worker stopped it as it shut down).
	RefundTry bool
	// FailedOver marks an up_for_retry end as the dead-worker check's: the
	// try's worker may still take it back or report it
	// (TaskInstanceTakeBack, From).
	FailedOver bool
	// SeenHeartbeat, set for the dead-worker check's end, conditions it
	// on the try's last heartbeat being the one the check read (At nil:
	// none yet): a heartbeat that came meanwhile makes the end
	// ErrConflict, and the live worker keeps its try.
	SeenHeartbeat *HeartbeatSeen
	Now           time.Time
	NextRetryAt   *time.Time
	// OutletEvents are recorded (and queued for consumers) in the same
	// transaction when the try finishes as success; ignored otherwise.
	OutletEvents []AssetEventParams
	// ClearTaskState deletes the instance's task state in the same
	// transaction when State is success ([state_store] clear_on_success,
	// docs/requirements.md#ts-4).
	ClearTaskState bool
	// NoAliases says the try's task declares no alias outlet, so the try
	// has no alias additions to record or drop: their look-up is skipped
	// (and, with nothing else to record, the transaction).
	NoAliases bool
}

// HeartbeatSeen is the last heartbeat a check read of a try (At nil: the
// try had not beaten yet).
type HeartbeatSeen struct{ At *time.Time }

// LateLogGrace is how long after someone other than its worker ended a
// running try (core.TaskInstance.StoppedAt: a mark, or a clear, which
// archives it) the worker may still ship the try's last log lines: it
// learns of the end at its next heartbeat, then stops the task (its kill
// grace) and ships what is left. A remote log store uploads such a log
// only then.
const LateLogGrace = 2 * time.Minute

// TaskLogPruneParams is one batch of a walk over the database-kept logs.
type TaskLogPruneParams struct {
	Before time.Time // the logs last written before this go
	After  string    // the key the last batch ended at; "" = from the first log
	Limit  int       // how many logs the batch looks at (1 or more)
}

// TaskLogPruned is what one batch of TaskLogPrune did.
type TaskLogPruned struct {
	Chunks int64  // the chunks it deleted
	Next   string // the last key it looked at, the next batch's After; "" = it reached the end
}

// RunWithTasks is what DagRunGetPausedWithTasks reads.
type RunWithTasks struct {
	Run    *core.DagRun // nil when it has none of the instances asked for
	Paused bool         // its DAG is paused (or has no row)
	Tasks  []core.TaskInstance
}

// ActiveCounts are the occupied slots used by the scheduler's limits.
type ActiveCounts struct {
	PoolSlots map[string]int // pool → slots of queued+running instances
	ByDag     map[string]int // dag_id → queued+running instances
	ByRun     map[int64]int  // dag_run id → queued+running instances
	// Claimable counts, per queue, the queued instances no worker has
	// claimed yet: the work waiting for a free worker slot.
	Claimable map[string]int
}

// XComStore holds cross-task values.
type XComStore interface {
	XComSet(ctx context.Context, x *core.XCom) error
	// XComGet returns ErrNotFound when absent.
	XComGet(ctx context.Context, dagID, runID, taskID string, mapIndex int, key string) (*core.XCom, error)
	// XComList lists a run's values (store.XComOrder); XComCount counts
	// them with the same filters.
	XComList(ctx context.Context, p *XComListParams) ([]core.XCom, error)
	XComCount(ctx context.Context, p *XComListParams) (int, error)
	// XComDelete deletes one value; deleting an absent value is not an error.
	XComDelete(ctx context.Context, dagID, runID, taskID string, mapIndex int, key string) error
	// XComClear deletes the values of one task instance (before a new try).
	XComClear(ctx context.Context, dagID, runID, taskID string, mapIndex int) error
}

// XComListParams filters XComList and XComCount: the values of one run.
type XComListParams struct {
	DagID    string // "" = every DAG
	RunID    string // "" = every run (of DagID)
	TaskID   string // "" = every task
	MapIndex *int   // nil = every map index
	Key      string // "" = every key
	Page
}

// AuthStore holds users, API tokens and connections.
type AuthStore interface {
	UserUpsert(ctx context.Context, u *core.User) error
	UserGet(ctx context.Context, username string) (*core.User, error)
	// UserList lists users (store.UserOrder, by username by default);
	// UserCount counts them.
	UserList(ctx context.Context, p *UserListParams) ([]core.User, error)
	UserCount(ctx context.Context, p *UserListParams) (int, error)
	// UserDelete removes a user and its API tokens; ErrNotFound when absent.
	UserDelete(ctx context.Context, username string) error
	APITokenCreate(ctx context.Context, t *core.APIToken) error
	// APITokenGet finds a token by the hash of its secret.
	APITokenGet(ctx context.Context, hash string) (*core.APIToken, error)
	APITokenList(ctx context.Context) ([]core.APIToken, error)
	APITokenDelete(ctx context.Context, id string) error
	// APITokenDeleteNamed deletes username's tokens named name and
	// returns how many there were.
	APITokenDeleteNamed(ctx context.Context, username, name string) (int64, error)
	// CredentialRevoke records a revocation, or moves an existing one of
	// the same scope and subject to r's time and actor.
	CredentialRevoke(ctx context.Context, r *core.CredentialRevocation) error
	// CredentialRevocationGet returns the revocation of a scope's subject,
	// or ErrNotFound when none was recorded.
	CredentialRevocationGet(ctx context.Context, scope, subject string) (*core.CredentialRevocation, error)
	// SessionEnd records login session id as ended (a logout) until
	// expires, the session's own end, and deletes the records of sessions
	// that expired before now. Ending a session twice is not an error.
	SessionEnd(ctx context.Context, id string, expires, now time.Time) error
	// SessionEnded reports whether login session id was ended.
	SessionEnded(ctx context.Context, id string) (bool, error)
}

// MiscStore holds pools, connections, job liveness and the audit log.
type MiscStore interface {
	PoolUpsert(ctx context.Context, p *core.Pool) error
	// PoolList lists pools (store.PoolOrder); PoolCount counts them.
	PoolList(ctx context.Context, p *PoolListParams) ([]core.Pool, error)
	PoolCount(ctx context.Context, p *PoolListParams) (int, error)
	PoolDelete(ctx context.Context, name string) error

	ConnectionUpsert(ctx context.Context, c *core.Connection) error
	ConnectionGet(ctx context.Context, id string) (*core.Connection, error)
	// ConnectionList lists connections (store.ConnectionOrder);
	// ConnectionCount counts them.
	ConnectionList(ctx context.Context, p *ConnectionListParams) ([]core.Connection, error)
	ConnectionCount(ctx context.Context, p *ConnectionListParams) (int, error)
	ConnectionDelete(ctx context.Context, id string) error

	VariableUpsert(ctx context.Context, v *core.Variable) error
	// VariableGet returns a variable (value unsealed) or ErrNotFound.
	VariableGet(ctx context.Context, key string) (*core.Variable, error)
	// VariableList lists variables (store.VariableOrder); VariableCount
	// counts them.
	VariableList(ctx context.Context, p *VariableListParams) ([]core.Variable, error)
	VariableCount(ctx context.Context, p *VariableListParams) (int, error)
	VariableDelete(ctx context.Context, key string) error

	// JobHeartbeat records that a process of a role is alive.
	JobHeartbeat(ctx context.Context, j *core.Job) error
	JobList(ctx context.Context) ([]core.Job, error)
	// WorkerLastBeat returns the latest job row of worker workerID's
	// processes (its latest heartbeat and interval), or ErrNotFound.
	WorkerLastBeat(ctx context.Context, workerID string) (*core.Job, error)
	// TaskLogAppend stores a chunk of a task log kept in the database
	// ([logging] log_store = database), appending only the bytes the log
	// does not hold yet (a chunk sent again changes nothing), and returns
	// the log's length; a chunk past the end wraps ErrConflict (the
	// length returned is where it must start).
	TaskLogAppend(ctx context.Context, p *TaskLogAppendParams) (int64, error)
	// TaskLogRead returns up to limit bytes of a log from offset and the
	// offset to continue from; a log without any byte wraps ErrNotFound.
	TaskLogRead(ctx context.Context, key string, offset int64, limit int) ([]byte, int64, error)
	// TaskLogSize returns a log's length (0 when it has none).
	TaskLogSize(ctx context.Context, key string) (int64, error)
	// TaskLogPrune looks at the next p.Limit logs after p.After, in key
	// order, and deletes those last written before p.Before, whole: a walk
	// a batch at a time, so that no prune reads the whole chunk table.
	TaskLogPrune(ctx context.Context, p *TaskLogPruneParams) (TaskLogPruned, error)
	// TaskLogRecord records where a try's log is stored (p.Key's row is
	// replaced: the last api-server to store its first bytes wins).
	TaskLogRecord(ctx context.Context, p *TaskLog) error
	// TaskLogGet returns the record of a log, or ErrNotFound.
	TaskLogGet(ctx context.Context, key string) (*TaskLog, error)
	// TaskLogsToUpload lists up to limit remote logs not uploaded yet whose
	// try has ended (LateLogGrace ago for a try someone else ended; or
	// whose task instance is gone) and that no uploader holds a lease on at
	// now, oldest first.
	TaskLogsToUpload(ctx context.Context, now time.Time, limit int) ([]TaskLog, error)
	// TaskLogLease takes the upload of key until until, if no one holds
	// it at now and it is not uploaded yet; it reports whether it did.
	TaskLogLease(ctx context.Context, key string, now, until time.Time) (bool, error)
	// TaskLogStored marks a remote log uploaded whole (size bytes at
	// location) and deletes its chunks, in one transaction.
	TaskLogStored(ctx context.Context, key, location string, size int64, now time.Time) error
	// TaskLogUploadFailed counts a failed upload, keeps its error and
	// leaves the next attempt to after retryAt.
	TaskLogUploadFailed(ctx context.Context, key, reason string, retryAt time.Time) error
	// TaskLogsStoredBefore lists up to limit remote logs uploaded before
	// before and not pruned, oldest first (retention).
	TaskLogsStoredBefore(ctx context.Context, before time.Time, limit int) ([]TaskLog, error)
	// TaskLogPruned records that retention deleted a log at now (its
	// record stays, to say so) and deletes any chunks of it.
	TaskLogPruned(ctx context.Context, key string, now time.Time) error
	// JobPrune deletes the rows of processes whose latest heartbeat is
	// older than before (stale rows of stopped processes) and returns how
	// many it deleted.
	JobPrune(ctx context.Context, before time.Time) (int64, error)
	// JobDeleteOfProcess deletes the rows of one process (hostname and
	// pid), whatever their roles, and returns how many it deleted: a
	// `weir dags test` ending, whose roles were no deployment's.
	JobDeleteOfProcess(ctx context.Context, hostname string, pid int) (int64, error)
	// WorkerHeartbeat records that a worker process is alive (p.Job, with
	// its WorkerID) and, in the same transaction, refreshes the heartbeat
	// of the running tries and the claim time of the unstarted claims of
	// p.Holding that are that worker's.
	WorkerHeartbeat(ctx context.Context, p *WorkerHeartbeatParams) error

	AuditLogAdd(ctx context.Context, e *core.AuditEntry) error
	// AuditLogList lists entries (store.AuditLogOrder, newest first by
	// default); AuditLogCount counts them with the same filters (the
	// cursor aside).
	AuditLogList(ctx context.Context, p *AuditLogListParams) ([]core.AuditEntry, error)
	AuditLogCount(ctx context.Context, p *AuditLogListParams) (int, error)
}

// PoolListParams filters PoolList and PoolCount.
type PoolListParams struct {
	Names  []string // empty = every pool
	Search string   // only pools whose name contains it, ignoring case
	// WithOccupancy fills each pool's OccupiedSlots (the slots of its
	// queued and running task instances).
	WithOccupancy bool
	Page
}

// ConnectionListParams pages ConnectionList.
type ConnectionListParams struct {
	Search string // only connections whose id contains it, ignoring case
	Page
}

// VariableListParams pages VariableList.
type VariableListParams struct {
	Search string // only variables whose key contains it, ignoring case
	Page
}

// UserListParams pages UserList and UserCount.
type UserListParams struct {
	Role string // "" = any
	// Lock, in a transaction, makes UserCount lock the users it counts
	// until the transaction ends: a concurrent change of them waits, and
	// the count holds for what the transaction then writes.
	Lock bool
	Page
}

// AuditLogListParams filters AuditLogList and AuditLogCount.
type AuditLogListParams struct {
	Action string // "" = any, e.g. "dag.pause"
	User   string // "" = anyone
	Target string // "" = any; else the entries about it and under it ("etl": etl, etl/r1, etl/r1/load)
	Cursor
	Page
}

// TriggerStore holds triggers and the tries deferred on them.
type TriggerStore interface {
	// TaskInstanceDefer creates p.Trigger's row and moves the try p.ID to
	// deferred on it, in one transaction, when the try's state is one of
	// p.From (running for a try that defers; none or scheduled for a task
	// that starts from its trigger). Returns the trigger id; ErrConflict
	// (nothing created) when the try is in another state.
	TaskInstanceDefer(ctx context.Context, p *TaskInstanceDeferParams) (int64, error)
	// TaskInstanceResume moves deferred tries (or, with p.FromNone, tries
	// in state none) to scheduled: those waiting on p.TriggerID, or those
	// listed in p.IDs. Returns the ids that moved.
	TaskInstanceResume(ctx context.Context, p *TaskInstanceResumeParams) ([]string, error)
	// TaskInstanceDeferredTimedOut lists up to limit deferred tries whose
	// trigger_timeout is before before, earliest first.
	TaskInstanceDeferredTimedOut(ctx context.Context, before time.Time, limit int) ([]core.TaskInstance, error)

	TriggerGet(ctx context.Context, id int64) (*core.Trigger, error)
	// TriggerList lists triggers by id; TriggerCount counts them.
	TriggerList(ctx context.Context, p *TriggerListParams) ([]core.Trigger, error)
	TriggerCount(ctx context.Context, p *TriggerListParams) (int, error)
	// TriggerClaim assigns to p.TriggererID up to p.Limit triggers that are
	// unassigned or whose triggerer's job heartbeat is older than
	// p.AliveSince; concurrent claimers take disjoint triggers. Returns the
	// triggers it took.
	TriggerClaim(ctx context.Context, p *TriggerClaimParams) ([]core.Trigger, error)
	// TriggerHold locks trigger id for the rest of the transaction when
	// triggererID still owns it; ErrConflict when it does not (it moved to
	// another triggerer, or was deleted). Every event commits behind it.
	TriggerHold(ctx context.Context, id int64, triggererID string) error
	// TriggerDeleteUnused deletes the triggers among ids (all when empty)
	// that no deferred try waits on and no running watcher
	// (WatcherListParams.Running) uses, and returns how many went.
	TriggerDeleteUnused(ctx context.Context, ids ...int64) (int, error)
	// TriggerRetireProducer deletes trigger id, which produces a stream,
	// when no try waits (is deferred) on it any more, its stream open or not (the
	// stream stays for a new trigger of the producer's next try to
	// resume); its triggerer stops running it at its next reconcile. It
	// reports whether the trigger went (false for a trigger that is
	// gone, produces no stream, or that a try still waits on).
	TriggerRetireProducer(ctx context.Context, id int64) (bool, error)
}

// TaskInstanceDeferParams describes a deferral.
type TaskInstanceDeferParams struct {
	ID         string
	From       []core.TIState
	Trigger    core.TriggerSpec
	NextMethod string
	NextKwargs json.RawMessage
	Timeout    *time.Time // nil = never
	Now        time.Time
	// StreamID, when set, makes the trigger the producer of that stream
	// (a task other tasks iterate over): the stream is created, bounded by
	// MaxPending, when it does not exist yet, and resumed when it is open
	// (the retry of a producer continues its stream). ErrInvalid, with
	// nothing changed, when it is closed: a try can never produce it.
	StreamID   string
	MaxPending int
}

// TaskInstanceResumeParams says which deferred tries resume, and with what.
type TaskInstanceResumeParams struct {
	TriggerID int64    // the tries waiting on this trigger, or
	IDs       []string // these tries
	// Event is the trigger's payload (nil for a failure).
	Event json.RawMessage
	// Fail, when set, makes the tries resume into a failure with this
	// message (next_method __fail__).
	Fail string
	// SensorTimeout, with Fail, says the failure is a sensor's timeout
	// (core.DeferralFailure.SensorTimeout).
	SensorTimeout bool
	// FromNone moves tries in state none instead of deferred ones: into
	// the failure Fail names (a task that cannot start from its trigger),
	// or with Event (a retry of a streaming operator whose stream exists).
	FromNone bool
	// Method, when set, resumes only the tries whose next_method it is
	// (core.NextMethodStream: handling sensors resume at their stream's
	// first event).
	Method string
	Now    time.Time
}

// TriggerListParams filters TriggerList and TriggerCount.
type TriggerListParams struct {
	TriggererID string // "" = any
	Page
}

// TriggerClaimParams is one claim of a triggerer.
type TriggerClaimParams struct {
	TriggererID string
	AliveSince  time.Time // a triggerer whose heartbeat is older is dead
	Limit       int
	// DagRunID, when not 0, takes only the triggers that run's instances
	// wait on or that fill its tasks' streams (no watcher's): a triggerer
	// confined to one run, `weir dags test`'s.
	DagRunID int64
}
