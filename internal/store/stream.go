package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// StreamStore holds event streams (docs/streaming.md): a head row per
// stream and its envelopes. Appends and closes of a trigger's stream are
// made inside a transaction that holds the trigger (TriggerHold), so a
// triggerer that lost the trigger appends nothing.
type StreamStore interface {
	// StreamCreate creates stream p.ID and, with p.Trigger, the trigger
	// whose run produces it, in one transaction. ErrConflict, with nothing
	// created, when the id exists.
	StreamCreate(ctx context.Context, p *StreamCreateParams) (*core.Stream, error)
	// StreamGet returns one stream, or ErrNotFound.
	StreamGet(ctx context.Context, id string) (*core.Stream, error)
	// StreamAppend appends p.Payloads as the stream's next envelopes, as
	// many as max_pending leaves room for (Accepted, possibly 0; the
	// rest is for the caller to append once consumers made room). The last
	// payload is marked is_last and the stream closed when p.Last and every
	// payload fitted. ErrConflict, with nothing appended, when the stream
	// is closed; ErrNotFound when it does not exist.
	StreamAppend(ctx context.Context, p *StreamAppendParams) (*StreamAppendResult, error)
	// StreamClose closes a stream: its last envelope (if any) is marked
	// is_last and p.Error is recorded. Closing a closed stream changes
	// nothing. TriggerDeleteUnused then deletes its trigger (a trigger
	// with an open stream is in use).
	StreamClose(ctx context.Context, p *StreamCloseParams) (*core.Stream, error)
	// StreamEventList lists a stream's envelopes from sequence index
	// p.After+1 in order, at most p.Limit, paged in the database.
	StreamEventList(ctx context.Context, p *StreamEventListParams) ([]core.StreamEvent, error)
	// StreamConsume marks the pending envelopes with sequence indexes from
	// p.From to p.Through consumed, and returns how many it marked (an
	// envelope is consumed once, so a repeat marks none).
	StreamConsume(ctx context.Context, p *StreamConsumeParams) (int, error)
	// StreamCleanup deletes up to limit envelopes consumed before before,
	// then the closed streams with nothing pending, no envelope left and no
	// change since before; returns how many envelopes went.
	StreamCleanup(ctx context.Context, before time.Time, limit int) (int, error)
}

// StreamCreateParams describes a new stream.
type StreamCreateParams struct {
	ID         string
	MaxPending int
	// Trigger, when its Type is set, is the trigger whose run produces
	// the stream: created unassigned, for a triggerer to claim.
	Trigger core.TriggerSpec
	Now     time.Time
}

// StreamAppendParams is one append to a stream.
type StreamAppendParams struct {
	StreamID string
	Payloads []json.RawMessage
	// Last marks the last payload is_last and closes the stream.
	Last bool
	Now  time.Time
}

// StreamAppendResult says what an append did.
type StreamAppendResult struct {
	// Accepted is how many payloads (from the first) were appended.
	Accepted int
	// Stream is the stream's head after the append.
	Stream core.Stream
}

// StreamCloseParams closes a stream.
type StreamCloseParams struct {
	StreamID string
	Error    string // "" = the producer ended normally
	Now      time.Time
}

// StreamEventListParams selects envelopes of one stream.
type StreamEventListParams struct {
	StreamID string
	After    int64 // the sequence index to start after; -1 = from the first
	Limit    int
	// PendingOnly leaves out consumed envelopes.
	PendingOnly bool
}

// StreamConsumeParams marks a range of a stream's envelopes consumed.
type StreamConsumeParams struct {
	StreamID      string
	From, Through int64 // sequence indexes, inclusive
	Now           time.Time
}
