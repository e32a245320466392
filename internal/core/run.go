package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// DagRun is one run of a DAG.
type DagRun struct {
	ID                int64           `json:"id"`
	DagID             string          `json:"dag_id"`
	RunID             string          `json:"dag_run_id"`
	RunType           RunType         `json:"run_type"`
	State             DagRunState     `json:"state"`
	LogicalDate       *time.Time      `json:"logical_date"`
	DataIntervalStart *time.Time      `json:"data_interval_start"`
	DataIntervalEnd   *time.Time      `json:"data_interval_end"`
	Conf              json.RawMessage `json:"conf"` // a JSON object, {} for none
	DagVersionID      int64           `json:"dag_version_id"`
	QueuedAt          time.Time       `json:"queued_at"`
	StartDate         *time.Time      `json:"start_date"`
	EndDate           *time.Time      `json:"end_date"`
	// PartitionKey is the partition the run is for: the key of the events
	// that created a per-partition or per-event run (DAG.AssetRuns), or
	// the one given to a manual trigger; nil otherwise.
	PartitionKey *string `json:"partition_key"`
	// BackfillID is the backfill the run belongs to (docs/backfills.md),
	// nil for a run of no backfill.
	BackfillID *int64 `json:"backfill_id"`
	// TestJobID is the job row of the `weir dags test` (or `tasks test`)
	// process running the run in-process, its api-server's, until the test
	// ends it: the schedulers fail a run whose process stopped
	// heartbeating before it ended (job.Gone). A `tasks test`'s begins
	// with OneTaskTestPrefix. "" for every other run.
	TestJobID string `json:"-"`
}

// OneTaskTestPrefix begins the TestJobID of a `weir tasks test`'s run,
// which tests one task (the others marked removed): its end fires none of
// the DAG's own callbacks, as `airflow tasks test` ends no run.
const OneTaskTestPrefix = "tasks-test-"

// TestsOneTask says whether r is a `weir tasks test`'s run.
func (r *DagRun) TestsOneTask() bool { return strings.HasPrefix(r.TestJobID, OneTaskTestPrefix) }

// NoMapIndex is the map_index of an unmapped task instance.
const NoMapIndex = -1

// TaskInstance is the current try of one task (or one map index of a mapped
// task) in one DAG run. Its ID is a UUID regenerated for every try; earlier
// tries live in the task-instance history.
type TaskInstance struct {
	ID        string `json:"id"`
	DagRunID  int64  `json:"-"`
	DagID     string `json:"dag_id"`
	RunID     string `json:"dag_run_id"`
	TaskID    string `json:"task_id"`
	MapIndex  int    `json:"map_index"`
	TryNumber int    `json:"try_number"`
	MaxTries  int    `json:"max_tries"` // retries + 1, and one for each refunded try
	// Interruptions counts the tries its workers stopped as they shut down
	// and refunded (runs.Interrupted).
	Interruptions int `json:"interruptions,omitempty"`
	// StoppedAt is when someone other than its worker ended the try while
	// it ran (a mark); its worker may still ship the log's last lines for
	// store.LateLogGrace after.
	StoppedAt      *time.Time `json:"-"`
	State          TIState    `json:"state" nullable:"true"` // null for none (TIState.MarshalJSON)
	Queue          string     `json:"queue"`
	Pool           string     `json:"pool"`
	PoolSlots      int        `json:"pool_slots"`
	PriorityWeight int        `json:"priority_weight"`
	Operator       string     `json:"operator"`
	Hostname       string     `json:"hostname"`
	WorkerID       string     `json:"worker_id,omitempty"`
	PID            int        `json:"pid"`
	QueuedAt       *time.Time `json:"queued_dttm"`
	StartDate      *time.Time `json:"start_date"`
	EndDate        *time.Time `json:"end_date"`
	LastHeartbeat  *time.Time `json:"last_heartbeat_at"`
	NextRetryAt    *time.Time `json:"next_retry_at,omitempty"` // when up_for_retry may be scheduled again
	DagVersionID   int64      `json:"dag_version_id"`
	// MapArgs holds the values of the expanded arguments for a mapped
	// instance (argument name → value), nil when unmapped.
	MapArgs json.RawMessage `json:"map_args,omitempty"`
	// TriggerID is the trigger a deferred try waits on; TriggerTimeout
	// when it fails instead (nil = never).
	TriggerID      *int64     `json:"trigger_id,omitempty"`
	TriggerTimeout *time.Time `json:"trigger_timeout,omitempty"`
	// NextMethod and NextKwargs say how a deferred try resumes;
	// NextEvent is the payload of the trigger event that resumed it.
	NextMethod string          `json:"next_method,omitempty"`
	NextKwargs json.RawMessage `json:"next_kwargs,omitempty"`
	NextEvent  json.RawMessage `json:"next_event,omitempty"`
	// Trigger is the trigger a deferred try waits on, as the REST API
	// shows it (kwargs masked); not stored with the try.
	Trigger *Trigger `json:"trigger"`
}

// Duration returns how long the try ran, or zero.
func (ti *TaskInstance) Duration() time.Duration {
	if ti.StartDate == nil || ti.EndDate == nil {
		return 0
	}
	return ti.EndDate.Sub(*ti.StartDate)
}

// DagVersion is one distinct serialized form of a DAG.
type DagVersion struct {
	ID        int64     `json:"id"`
	DagID     string    `json:"dag_id"`
	Version   int       `json:"version_number"`
	Hash      string    `json:"hash"`
	Spec      DAG       `json:"-"`
	CreatedAt time.Time `json:"created_at"`
}

// DagModel is a DAG's row: its identity, pause state and latest version.
type DagModel struct {
	DagID          string     `json:"dag_id"`
	FileLoc        string     `json:"fileloc"`
	IsPaused       bool       `json:"is_paused"`
	IsActive       bool       `json:"is_active"`
	Description    string     `json:"description"`
	Schedule       string     `json:"timetable_summary"`
	Tags           []string   `json:"tags"`
	LatestVersion  int64      `json:"latest_dag_version_id"`
	NextRunAfter   *time.Time `json:"next_dagrun_run_after"` // when the scheduler should next consider a scheduled run
	LastParsedTime time.Time  `json:"last_parsed_time"`
}

// XCom is one cross-task value.
type XCom struct {
	DagID     string          `json:"dag_id"`
	RunID     string          `json:"run_id"`
	TaskID    string          `json:"task_id"`
	MapIndex  int             `json:"map_index"`
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	Timestamp time.Time       `json:"timestamp"`
}

// ImportError records why a DAG file could not be loaded.
type ImportError struct {
	ID        int64     `json:"import_error_id"`
	Filename  string    `json:"filename"`
	Message   string    `json:"stack_trace"`
	Timestamp time.Time `json:"timestamp"`
}

// Pool limits how many task instances run at once across DAGs.
type Pool struct {
	Name        string `json:"name"`
	Slots       int    `json:"slots"`
	Description string `json:"description,omitempty"`
	// OccupiedSlots is the slots of the pool's queued and running task
	// instances, when the store was asked for it (PoolList WithOccupancy);
	// the others are the slots of its task instances in each state.
	OccupiedSlots  int `json:"occupied_slots"`
	RunningSlots   int `json:"running_slots"`
	QueuedSlots    int `json:"queued_slots"`
	ScheduledSlots int `json:"scheduled_slots"`
	DeferredSlots  int `json:"deferred_slots"`
}

// DefaultPool is the pool tasks use unless they name another.
const DefaultPool = "default_pool"

// DefaultQueue is the queue tasks use unless they name another.
const DefaultQueue = "default"

// TIKey names a task instance across its tries: (dag, run, task, map
// index); MapIndex is NoMapIndex for an unmapped task.
type TIKey struct {
	DagID    string
	RunID    string
	TaskID   string
	MapIndex int
}

// String names the instance in messages.
func (k TIKey) String() string {
	if k.MapIndex == NoMapIndex {
		return fmt.Sprintf("dag_id %q run_id %q task_id %q", k.DagID, k.RunID, k.TaskID)
	}
	return fmt.Sprintf("dag_id %q run_id %q task_id %q map_index %d", k.DagID, k.RunID, k.TaskID, k.MapIndex)
}

// DefaultRunIDPattern is the default of [scheduler] allowed_run_id_pattern
// (Airflow's): letters, digits and _ . ~ : + - only, so that a run id is
// inert wherever it is pasted (a shell command, a path, a URL).
const DefaultRunIDPattern = `^[A-Za-z0-9_.~:+-]+$`
