// Package execclient is the client side of Weir's Execution API: the Client
// that workers and the in-task CLI use to reach /execution, the wire types
// both sides share (requests, responses, problem reasons, headers), and the
// task environment (WEIR_API_URL, WEIR_TASK_TOKEN, ...). It imports no store
// and no server package, so that a worker and a task process build without
// either (docs/architecture.md#worker--execution-api); the server is package
// execapi, which imports this one for the wire types.
//
// Authentication: every route but /execution/health takes a bearer JWT. The
// claim route needs a worker credential; every other route an execution
// token whose subject is one try's task-instance id. When an execution token
// is near expiry the server returns a fresh one in the Refreshed-API-Token
// response header; the Client swaps it in.
package execclient

import (
	"encoding/json"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// RefreshedTokenHeader carries a reissued execution token in a response.
const RefreshedTokenHeader = "Refreshed-API-Token"

// Problem reasons (the "reason" member of a problem+json body).
const (
	ReasonInvalidState = "invalid_state" // the try is not in a state that allows the request
	ReasonNotRunning   = "not_running"   // heartbeat or write for a try that is no longer running
	ReasonUnknownAsset = "unknown_asset" // 404 for an asset that does not exist or is inactive, not an absent key
	ReasonLogGap       = "log_gap"       // 409 for a log chunk that starts past the end of the stored log
	ReasonWrongWorker  = "wrong_worker"  // 403 for a worker_id that is not the worker credential's subject
)

// Problem is an RFC 9457 problem+json body; Reason is an extension member
// naming the cause for programs (Airflow's "reason").
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// ExpectedOffset is set with ReasonLogGap: the stored log's length,
	// the offset the next chunk must start at.
	ExpectedOffset *int64 `json:"expected_offset,omitempty"`
}

// ClaimRequest asks for up to Limit workloads of Queues, waiting up to
// WaitSeconds for one to be queued.
type ClaimRequest struct {
	WorkerID    string   `json:"worker_id,omitempty"` // "" = the credential's subject
	Hostname    string   `json:"hostname"`
	Queues      []string `json:"queues"` // empty = ["default"]
	Limit       int      `json:"limit"`
	WaitSeconds float64  `json:"wait_seconds"`
	// Reclaim asks for the worker's own claims it never started and does
	// not hold (an earlier claim's answer was lost) first, again. A worker
	// sets it on its first claim and after a failed one; the client sets
	// it on its retries of a claim.
	Reclaim bool `json:"reclaim,omitempty"`
	// Holding lists the ids of the tries the worker holds (used with Reclaim).
	Holding []string `json:"holding,omitempty"`
	// CallbackLimit is how many fired callbacks the worker takes besides
	// (its free callback slots); 0 = none (a worker that predates
	// callbacks).
	CallbackLimit int `json:"callback_limit,omitempty"`
	// Start, when set, starts every claimed try at once for this process
	// (its host and pid, as RunRequest says them): each workload then
	// carries its run context (Workload.Run) and the worker skips the
	// run call, one round trip less per try. With Reclaim, the worker's
	// running tries that this process started and does not hold (a claim
	// whose answer was lost) come back too. An api-server that predates it
	// ignores it: the workloads then have no Run.
	Start *RunRequest `json:"start,omitempty"`
}

// ClaimResponse lists the claimed workloads (possibly none).
type ClaimResponse struct {
	Workloads []Workload         `json:"workloads"`
	Callbacks []CallbackWorkload `json:"callbacks,omitempty"`
}

// Workload is one claimed try with everything a worker needs to run it.
type Workload struct {
	TI     core.TaskInstance `json:"ti"`
	Task   core.Task         `json:"task"`
	Dag    DagInfo           `json:"dag"`
	DagRun core.DagRun       `json:"dag_run"`
	Token  string            `json:"token"` // execution token for this try
	// Run is the started try's run context when the claim asked to start
	// it (ClaimRequest.Start) and it started; nil = call Run first.
	Run *RunContext `json:"run,omitempty"`
}

// RestoreRun gives a started workload's run context the try and the run
// that servers since SlimRunVersion leave out of it (the workload's own);
// an older server's answer carries them and is left as it is.
func (w *Workload) RestoreRun() {
	if w.Run == nil {
		return
	}
	if w.Run.TI.ID == "" {
		w.Run.TI = w.TI
	}
	if w.Run.DagRun.ID == 0 {
		w.Run.DagRun = w.DagRun
	}
}

// DagInfo is the part of a DAG's definition a worker needs.
type DagInfo struct {
	DagID   string         `json:"dag_id"`
	Params  map[string]any `json:"params,omitempty"`
	FileLoc string         `json:"fileloc,omitempty"`
	// TemplateSyntax is the syntax the task's templates are in ("" = go).
	TemplateSyntax core.TemplateSyntax `json:"template_syntax,omitempty"`
}

// RunRequest starts a claimed try (PATCH .../run).
type RunRequest struct {
	Hostname string `json:"hostname"`
	PID      int    `json:"pid"`
}

// RunContext is what PATCH .../run returns, and a started workload's run
// context (Workload.Run), where DagRun and TI are left out since
// SlimRunVersion: they are the workload's own.
type RunContext struct {
	DagRun   core.DagRun       `json:"dag_run,omitzero"`
	TI       core.TaskInstance `json:"ti,omitzero"`
	MaxTries int               `json:"max_tries"`
	// Params are the DAG's params overridden by the run's conf.
	Params map[string]any `json:"params"`
	// LogSize is how many bytes the try's log holds already: a try
	// resumed after a deferral continues its log from there.
	LogSize int64 `json:"log_size,omitempty"`
	// TriggeringAssetEvents are the asset events that created an
	// asset-triggered run (oldest first; Airflow's name), empty otherwise:
	// at most execapi.MaxTriggeringEvents of them, so a run created from a
	// burst does not carry it to every try.
	TriggeringAssetEvents []core.AssetEvent `json:"triggering_asset_events,omitempty"`
	// TriggeringAssetEventsTotal is how many events the run consumed: more
	// than len(TriggeringAssetEvents) when the list was cut (the REST
	// route upstreamAssetEvents pages through all of them).
	TriggeringAssetEventsTotal int `json:"triggering_asset_events_total,omitempty"`
}

// StateRequest ends a running try (PATCH .../state). State is success,
// failed, skipped or up_for_retry; the server decides between failed and
// up_for_retry from the tries left, so failed and up_for_retry mean the same,
// unless NoRetry says the try failed for good. The end date is the server's
// clock.
type StateRequest struct {
	State core.TIState `json:"state"`
	// NoRetry, with state failed, ends the task instance failed whatever
	// tries it has left (a sensor's timeout: Airflow's AirflowSensorTimeout).
	NoRetry bool `json:"no_retry,omitempty"`
	// Interrupted, with state failed, says the worker stopped the try as
	// it shut down (its shutdown grace over): the server retries it at
	// once, and the try does not count against the task's retries.
	Interrupted bool `json:"interrupted,omitempty"`
	// Deferral, with state deferred, names the trigger to wait on and how
	// to resume (its fields are inlined: trigger, next_method,
	// next_kwargs, timeout).
	*core.Deferral
	// Log, with a final state, is the end of the try's log not shipped
	// yet: the server appends it (as POST .../logs would) before it ends
	// the try (in the same transaction where logs are kept in the
	// database), so a try's last lines and its end are one request.
	Log *LogTail `json:"log,omitempty"`
	// Next, with a final state, hands the try's slot on: the server
	// claims and starts the worker's next try in the transaction that ends
	// this one and answers it in StateResponse.Next, a claim request less
	// per try (ADR 0032). The request must then also carry the worker's
	// credential in WorkerAuthorizationHeader: a try's token alone claims
	// nothing.
	Next *NextClaim `json:"next,omitempty"`
}

// NextClaim is what a final state report asks to claim in the same
// transaction: one try from the worker's queues, started for the worker
// process Start names.
type NextClaim struct {
	Queues []string   `json:"queues"` // empty = ["default"]
	Start  RunRequest `json:"start"`
}

// WorkerAuthorizationHeader carries the worker's credential ("Bearer
// <token>") on a final state report that claims the worker's next try
// (StateRequest.Next); Authorization carries the try's token, as always.
const WorkerAuthorizationHeader = "Weir-Worker-Authorization"

// MaxReportedLogTail is the largest log tail a state report carries; a
// longer one is shipped with POST .../logs before the report.
const MaxReportedLogTail = 64 << 10

// LogTail is the end of a try's log: Data from byte Offset on (base64 in
// JSON: a log need not be UTF-8).
type LogTail struct {
	Offset int64  `json:"offset"`
	Data   []byte `json:"data"`
}

// StateResponse reports the state the try ended in.
type StateResponse struct {
	State       core.TIState `json:"state"`
	NextRetryAt *time.Time   `json:"next_retry_at,omitempty"`
	// LogNextOffset, when the request carried a log tail, says it was
	// stored: the log's length after it, or, for a tail from byte 0 stored
	// in the database with the state (its next statement), the tail's end.
	LogNextOffset *int64 `json:"log_next_offset,omitempty"`
	// Next is the worker's next try, claimed and started with this end
	// when the request asked for it (StateRequest.Next) and one was
	// queued; nil = none (the worker claims as usual).
	Next *Workload `json:"next,omitempty"`
}

// HeartbeatRequest records liveness of a running try.
type HeartbeatRequest struct {
	Hostname string `json:"hostname"`
	PID      int    `json:"pid"`
}

// TokenResponse answers POST .../task-instances/{id}/token: a fresh
// execution token for a try of the worker's.
type TokenResponse struct {
	Token string `json:"token"`
}

// LogAppendResponse answers POST .../logs?offset=N (body: the chunk, raw
// bytes of the try's log from byte N on).
type LogAppendResponse struct {
	// NextOffset is the stored log's length after the request: where the
	// next chunk starts.
	NextOffset int64 `json:"next_offset"`
}

// XComResponse is one XCom value.
type XComResponse struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

// AnyMapIndex as an XComKey's MapIndex names no map index in a read: the
// server gives an unmapped task's value, or a mapped task's values as one
// JSON list in map index order (Airflow's xcom_pull without map_indexes).
const AnyMapIndex = -2

// XComKey names one XCom value.
type XComKey struct {
	DagID    string
	RunID    string
	TaskID   string
	MapIndex int
	Key      string
}

// Health is the body of GET /execution/health.
type Health struct {
	Status string `json:"status"`
}

// WorkerHeartbeatRequest says a worker process is alive and which tries it
// holds (POST /execution/workers/heartbeat, worker credential).
type WorkerHeartbeatRequest struct {
	WorkerID string `json:"worker_id,omitempty"` // "" = the credential's subject
	// ProcessID names this worker process (a UUID per start): its job row.
	ProcessID string    `json:"process_id"`
	Hostname  string    `json:"hostname"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	// IntervalSeconds is how often the worker sends this heartbeat.
	IntervalSeconds float64 `json:"interval_seconds"`
	// Version is the Weir version the worker runs (the health listing
	// shows it); "" = not told.
	Version string `json:"version,omitempty"`
	// Holding lists the ids of the tries the worker holds: claimed,
	// starting or running.
	Holding []string `json:"holding"`
}
