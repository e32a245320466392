package execclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/weirflow/weir/internal/core"
)

// HandlerBatch is the answer of GET
// /execution/task-instances/{id}/stream/events: events of a streaming
// operator's stream and where the stream stands.
type HandlerBatch = core.HandlerBatch

// StreamHandledRequest is the body of POST
// /execution/task-instances/{id}/stream/handled.
type StreamHandledRequest struct {
	// Through is the sequence index of the last event handled.
	Through int64 `json:"through"`
}

// StreamHandledResponse answers a StreamHandledRequest.
type StreamHandledResponse struct {
	// Handled is the first sequence index not handled: where a retry
	// resumes.
	Handled int64 `json:"handled"`
}

// HandlerEvents reads up to limit events of the client's try's stream
// (its task is a streaming operator) from sequence index from (-1 = the
// first not handled yet).
func (c *Client) HandlerEvents(ctx context.Context, from int64, limit int) (*HandlerBatch, error) {
	var b HandlerBatch
	q := url.Values{"from": {strconv.FormatInt(from, 10)}, "limit": {strconv.Itoa(limit)}}
	return &b, c.getOfTry(ctx, "stream/events", q, &b, fmt.Sprintf("read the task's stream events from %d", from))
}

// getOfTry reads GET .../task-instances/{the client's try}/sub?q into out;
// what says what it reads, in errors.
func (c *Client) getOfTry(ctx context.Context, sub string, q url.Values, out any, what string) error {
	if c.Identity.TIID == "" {
		return fmt.Errorf("%s: the client has no task instance id (WEIR_TI_ID)", what)
	}
	if err := c.doJSON(ctx, http.MethodGet, tiPath(c.Identity.TIID, sub)+"?"+q.Encode(), nil, out); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// StreamHandled records that the client's try handled its stream's events
// up to sequence index through, and returns the first index not handled.
func (c *Client) StreamHandled(ctx context.Context, through int64) (int64, error) {
	if c.Identity.TIID == "" {
		return 0, errors.New("record the task's handled events: the client has no task instance id (WEIR_TI_ID)")
	}
	var res StreamHandledResponse
	if err := c.doJSON(ctx, http.MethodPost, tiPath(c.Identity.TIID, "stream/handled"), StreamHandledRequest{Through: through}, &res); err != nil {
		return 0, fmt.Errorf("record events up to %d handled: %w", through, err)
	}
	return res.Handled, nil
}
