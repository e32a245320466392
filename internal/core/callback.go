package core

import "time"

// CallbackEvent names the state change a callback runs on, as Airflow names
// its callback arguments (docs/emission.md#callbacks).
type CallbackEvent string

// The callback events. A task has all five; a DAG has on_success and
// on_failure (its run's end).
const (
	OnExecute CallbackEvent = "on_execute" // a try starts (not when it resumes from a deferral)
	OnSuccess CallbackEvent = "on_success" // a try, or a run, succeeds
	OnFailure CallbackEvent = "on_failure" // a try fails for good, or a run fails
	OnRetry   CallbackEvent = "on_retry"   // a try fails and will be retried
	OnSkipped CallbackEvent = "on_skipped" // a try ends skipped (the task skipped itself)
)

// TaskCallbackEvents and DagCallbackEvents are the events each level has,
// in the order a DAG file lists them.
var (
	TaskCallbackEvents = []CallbackEvent{OnExecute, OnSuccess, OnFailure, OnRetry, OnSkipped}
	DagCallbackEvents  = []CallbackEvent{OnSuccess, OnFailure}
)

// CallbackSpec is one callback a DAG declares: a shell command, run by a
// worker like a bash task's command (a template over the run's context and
// .callback), or a notifier (docs/emission.md#notifiers).
type CallbackSpec struct {
	Command string `json:"command,omitempty"`
	// Notifier is NotifierWebhook or NotifierAssetEvent; "" = Command.
	Notifier string `json:"notifier,omitempty"`
	// ConnID is the webhook's connection: its URL and auth.
	ConnID string `json:"conn_id,omitempty"`
	// Asset names the asset an asset_event notifier emits an event of;
	// PartitionKey and Extra's strings are templates.
	Asset        string         `json:"asset,omitempty"`
	PartitionKey string         `json:"partition_key,omitempty"`
	Extra        map[string]any `json:"extra,omitempty"`
	// Function names a Go callback registered in the worker through the
	// SDK (weir.OnFailure(fn), ...; docs/go-sdk.md#callbacks): the worker
	// calls it in its own process. Outlets are the assets (by name, of
	// the DAG's assets) the function may emit events of.
	Function string   `json:"function,omitempty"`
	Outlets  []string `json:"outlets,omitempty"`
	// TemplateSyntax is the syntax of its templates, the DAG's (the loader
	// copies it here, so a worker renders a callback without the DAG).
	TemplateSyntax TemplateSyntax `json:"template_syntax,omitempty"`
}

// The notifiers.
const (
	NotifierWebhook    = "webhook"     // an HTTP POST of a JSON body to a connection's URL
	NotifierAssetEvent = "asset_event" // an asset event with the callback's provenance
)

// AssetSourceCallback is the source kind of an event an asset_event
// notifier emitted.
const AssetSourceCallback = "callback"

// Callbacks are the callbacks of a task or a DAG, per event; a DAG's have
// only OnSuccess and OnFailure.
type Callbacks struct {
	OnExecute []CallbackSpec `json:"on_execute,omitempty"`
	OnSuccess []CallbackSpec `json:"on_success,omitempty"`
	OnFailure []CallbackSpec `json:"on_failure,omitempty"`
	OnRetry   []CallbackSpec `json:"on_retry,omitempty"`
	OnSkipped []CallbackSpec `json:"on_skipped,omitempty"`
}

// For returns the callbacks of event ev.
func (c *Callbacks) For(ev CallbackEvent) []CallbackSpec {
	if c == nil {
		return nil
	}
	switch ev {
	case OnExecute:
		return c.OnExecute
	case OnSuccess:
		return c.OnSuccess
	case OnFailure:
		return c.OnFailure
	case OnRetry:
		return c.OnRetry
	case OnSkipped:
		return c.OnSkipped
	}
	return nil
}

// Any says whether c holds a callback of any event.
func (c *Callbacks) Any() bool {
	return c != nil && len(c.OnExecute)+len(c.OnSuccess)+len(c.OnFailure)+len(c.OnRetry)+len(c.OnSkipped) > 0
}

// Set replaces the callbacks of event ev.
func (c *Callbacks) Set(ev CallbackEvent, specs []CallbackSpec) {
	switch ev {
	case OnExecute:
		c.OnExecute = specs
	case OnSuccess:
		c.OnSuccess = specs
	case OnFailure:
		c.OnFailure = specs
	case OnRetry:
		c.OnRetry = specs
	case OnSkipped:
		c.OnSkipped = specs
	}
}

// CallbackState is where a callback's work item is: queued → running →
// success | failed (a running callback whose worker died goes back to
// queued while attempts remain).
type CallbackState string

// The callback states.
const (
	CallbackQueued  CallbackState = "queued"
	CallbackRunning CallbackState = "running"
	CallbackSuccess CallbackState = "success"
	CallbackFailed  CallbackState = "failed"
)

// Terminal reports whether the callback is done.
func (s CallbackState) Terminal() bool { return s == CallbackSuccess || s == CallbackFailed }

// CallbackLevel says whether a callback belongs to a task's try or a run.
type CallbackLevel string

// The callback levels.
const (
	CallbackTask CallbackLevel = "task"
	CallbackDag  CallbackLevel = "dag"
)

// Callback is a fired callback: a durable work item written in the
// transaction of the state change that fired it and run by a worker
// (ADR 0015). Its spec is a copy of the run's pinned DAG version's. A
// DAG-level callback has no task: TaskID is "", MapIndex NoMapIndex and
// TryNumber 0.
type Callback struct {
	ID        int64         `json:"id"`
	Level     CallbackLevel `json:"level"`
	Event     CallbackEvent `json:"event"`
	DagID     string        `json:"dag_id"`
	RunID     string        `json:"run_id"`
	DagRunID  int64         `json:"-"`
	TaskID    string        `json:"task_id,omitempty"`
	MapIndex  int           `json:"map_index"`
	TryNumber int           `json:"try_number,omitempty"`
	// SpecIndex is the callback's position in its event's list.
	SpecIndex int          `json:"spec_index"`
	Spec      CallbackSpec `json:"spec"`
	// Outcome is the state the firing change ended in (the try's or the
	// run's: success, failed, up_for_retry, skipped, running).
	Outcome   string        `json:"outcome"`
	State     CallbackState `json:"state"`
	Attempts  int           `json:"attempts"`
	WorkerID  string        `json:"worker_id,omitempty"`
	Heartbeat *time.Time    `json:"-"`
	StartedAt *time.Time    `json:"start_date,omitempty"`
	EndedAt   *time.Time    `json:"end_date,omitempty"`
	Error     string        `json:"error,omitempty"`
	CreatedAt time.Time     `json:"created_at"`
}
