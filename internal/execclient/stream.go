package execclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// StreamPushRequest is the body of POST
// /execution/task-instances/{id}/stream: the running try of a producer
// task (stream: true) pushes items to its run's stream
// (docs/streaming.md#pushes-from-a-running-task).
type StreamPushRequest struct {
	// From is the sequence index of Items[0]: items the stream holds
	// already are skipped, so a repeated request changes nothing.
	From  int64             `json:"from"`
	Items []json.RawMessage `json:"items,omitempty"`
	// Close closes the stream after the items.
	Close bool `json:"close,omitempty"`
}

// StreamHead is where a producer's stream stands, the answer of GET and
// POST /execution/task-instances/{id}/stream (Accepted and Skipped are a
// push's).
type StreamHead = core.StreamPushResult

// StreamHead returns where the client's try's stream stands (next_index
// 0 before the first push).
func (c *Client) StreamHead(ctx context.Context) (*StreamHead, error) {
	if c.Identity.TIID == "" {
		return nil, errors.New("read the task's stream: the client has no task instance id (WEIR_TI_ID)")
	}
	var h StreamHead
	if err := c.doJSON(ctx, http.MethodGet, tiPath(c.Identity.TIID, "stream"), nil, &h); err != nil {
		return nil, fmt.Errorf("read the task's stream: %w", err)
	}
	return &h, nil
}

// streamWaitMax bounds the wait between pushes while the stream is full.
const streamWaitMax = time.Second

// PushStream pushes items to the client's try's stream from sequence index
// from (and closes it after them with closing), waiting while the stream
// holds max_pending items not yet expanded (backpressure), and returns its
// head once every item is persisted. Requests are idempotent per sequence
// index, so the client's retries after a lost answer are safe. An error
// matches core.ErrInvalid for a task without stream: true or a bad item
// (over 1 MiB, not JSON), core.ErrConflict for a closed stream.
func (c *Client) PushStream(ctx context.Context, from int64, items []json.RawMessage, closing bool) (*StreamHead, error) {
	if c.Identity.TIID == "" {
		return nil, errors.New("push to the task's stream: the client has no task instance id (WEIR_TI_ID)")
	}
	wait := 20 * time.Millisecond
	for {
		var h StreamHead
		req := StreamPushRequest{From: from, Items: items, Close: closing}
		if err := c.doJSON(ctx, http.MethodPost, tiPath(c.Identity.TIID, "stream"), req, &h); err != nil {
			return nil, fmt.Errorf("push %d items to the task's stream from sequence index %d: %w", len(items), from, err)
		}
		done := h.Skipped + h.Accepted
		if done >= len(items) && (!closing || h.Closed) {
			return &h, nil
		}
		items, from = items[done:], from+int64(done)
		if done > 0 {
			wait = 20 * time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("push to the task's stream: waiting for room: %w", ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, streamWaitMax)
	}
}
