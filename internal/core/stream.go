package core

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"
)

// Stream is one stream of events (SPEC F, docs/streaming.md): a producer (a
// trigger run, or later a running task) appends envelopes with consecutive
// sequence indexes from 0; consumers mark them consumed. At most MaxPending
// envelopes are persisted but not consumed at any moment: the producer
// waits for room (backpressure). Closed is set with the envelope marked
// is_last, or when the producer ends without one; nothing is appended after.
type Stream struct {
	ID string `json:"stream_id"`
	// TriggerID is the trigger whose run produces the stream (0 = none, or
	// the trigger is gone once the stream closed).
	TriggerID  int64 `json:"trigger_id,omitempty"`
	MaxPending int   `json:"max_pending"`
	// NextIndex is the sequence index the next envelope gets: the number of
	// envelopes ever appended.
	NextIndex int64 `json:"next_index"`
	// Pending counts envelopes appended and not yet consumed.
	Pending int  `json:"pending"`
	Closed  bool `json:"closed"`
	// Error is why the producer failed ("" = it did not); a failed stream
	// is closed.
	Error     string    `json:"error,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// LastIndex is the sequence index of the last persisted envelope, -1 when
// there is none: where a restarted producer resumes (after it).
func (s *Stream) LastIndex() int64 { return s.NextIndex - 1 }

// StreamEvent is one envelope of a stream: {trigger_run_id (the stream id),
// sequence_index, payload, is_last}, persisted before its producer is told
// it was accepted.
type StreamEvent struct {
	StreamID      string          `json:"stream_id"`
	SequenceIndex int64           `json:"sequence_index"`
	Payload       json.RawMessage `json:"payload"`
	IsLast        bool            `json:"is_last"`
	CreatedAt     time.Time       `json:"created_at"`
	// ConsumedAt is when a consumer marked it handled (nil = pending).
	ConsumedAt *time.Time `json:"consumed_at,omitempty"`
}

// Stream limits.
const (
	// MaxStreamPayloadBytes bounds one envelope's payload (a page of items
	// fits; a file does not: store it elsewhere and send its location).
	MaxStreamPayloadBytes = 1 << 20
	// MaxStreamIDBytes bounds a stream id.
	MaxStreamIDBytes = 250
	// DefaultStreamMaxPending is [triggerer] stream_max_pending's default.
	DefaultStreamMaxPending = 1000
)

// TaskStreamID is the id of the stream a producer task (a task other tasks
// iterate over) fills in one DAG run: "run-<dag run id>:<task id>", or,
// when that is longer than MaxStreamIDBytes, the run part and a hash of
// the task id. Every try of the producer appends to it.
func TaskStreamID(dagRunID int64, taskID string) string {
	id := RunStreamPrefix(dagRunID) + taskID
	if len(id) <= MaxStreamIDBytes {
		return id
	}
	sum := sha256.Sum256([]byte(taskID))
	return fmt.Sprintf("%ssha256-%x", RunStreamPrefix(dagRunID), sum)
}

// RunStreamPrefix begins the id of every stream of one DAG run's tasks
// (TaskStreamID): "run-<dag run id>:".
func RunStreamPrefix(dagRunID int64) string { return fmt.Sprintf("run-%d:", dagRunID) }

// StreamPushResult is what a push of items to a producer task's stream did
// (docs/streaming.md#pushes-from-a-running-task), and where the stream
// stands after it.
type StreamPushResult struct {
	StreamID string `json:"stream_id"`
	// Accepted is how many items were appended now (the rest wait for
	// room: push them again from NextIndex); Skipped how many leading
	// items the stream held already.
	Accepted  int   `json:"accepted"`
	Skipped   int   `json:"skipped"`
	NextIndex int64 `json:"next_index"`
	Pending   int   `json:"pending"`
	Closed    bool  `json:"closed"`
}

// HandlerBatch is what a streaming operator's try reads of its stream.
type HandlerBatch struct {
	StreamID string `json:"stream_id"`
	// Handled is the sequence index of the first event not handled yet:
	// where a try resumes.
	Handled int64 `json:"handled"`
	// Events are the envelopes asked for, in order.
	Events    []StreamEvent `json:"events"`
	NextIndex int64         `json:"next_index"`
	Closed    bool          `json:"closed"`
	// Error is why the trigger failed, once the stream closed.
	Error string `json:"error,omitempty"`
}
