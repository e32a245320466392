package core

import (
	"bytes"
	"encoding/json"
	"time"
)

// TriggerSpec is a trigger as a value: a registered type name and its JSON
// kwargs (package trigger builds and runs it).
type TriggerSpec struct {
	Type   string          `json:"type"`
	Kwargs json.RawMessage `json:"kwargs,omitempty"`
}

// Trigger is one row of the trigger table: a trigger some deferred try (or,
// later, a watcher) waits on, and the triggerer running it.
type Trigger struct {
	ID          int64           `json:"id"`
	Type        string          `json:"type"`
	Kwargs      json.RawMessage `json:"kwargs"`
	CreatedAt   time.Time       `json:"created_date"`
	TriggererID string          `json:"triggerer_id,omitempty"` // job id; "" = unassigned
	// StreamID names the stream its run produces (docs/streaming.md); ""
	// for a trigger whose first event resumes its waiters.
	StreamID string `json:"stream_id,omitempty"`
}

// Spec returns the trigger as a value.
func (t *Trigger) Spec() TriggerSpec { return TriggerSpec{Type: t.Type, Kwargs: t.Kwargs} }

// Deferral is what a running try asks for when it defers (and what a task
// that starts from a trigger declares): wait on Trigger, then resume with
// NextMethod and NextKwargs, or fail once Timeout (0 = never) passes.
type Deferral struct {
	Trigger    TriggerSpec     `json:"trigger"`
	NextMethod string          `json:"next_method,omitempty"`
	NextKwargs json.RawMessage `json:"next_kwargs,omitempty"`
	Timeout    Duration        `json:"timeout,omitempty"`
}

// NextMethodFail is the next method of a try whose trigger failed or timed
// out: the worker fails it with the message in next_kwargs (a
// DeferralFailure), and retries follow as for any failure (Airflow's
// "__fail__") but after a sensor's timeout.
const NextMethodFail = "__fail__"

// DeferralFailure is the next_kwargs of a try resumed into a failure
// (NextMethodFail).
type DeferralFailure struct {
	Error string `json:"error"`
	// SensorTimeout says a sensor's wait for its event timed out
	// (runs.TimeoutEndsSensor): it fails without retries, or is skipped
	// with soft_fail (Airflow's AirflowSensorTimeout).
	SensorTimeout bool `json:"sensor_timeout,omitempty"`
}

// NextMethodStream is the next method of a handling sensor's first try
// while it waits deferred on its streaming trigger: the first envelope
// appended resumes it (not the stream's close), and the worker hands it
// the stream's events in order (docs/streaming.md#streaming-operators).
const NextMethodStream = "__stream__"

// CanonicalJSON returns raw compacted with object keys sorted and numbers
// kept as written, so that equal values compare equal as text (empty and
// null are {}: no kwargs). Watchers whose triggers are equal this way
// share one trigger.
func CanonicalJSON(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}", nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	out, err := json.Marshal(v)
	return string(out), err
}
