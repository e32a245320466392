package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/trigger"
)

// StreamSource lets the try of a streaming operator read its stream and
// record what it handled (an execclient.Client satisfies it;
// docs/streaming.md#streaming-operators).
type StreamSource interface {
	// HandlerEvents reads up to limit events from sequence index from
	// (-1 = the first not handled yet).
	HandlerEvents(ctx context.Context, from int64, limit int) (*execclient.HandlerBatch, error)
	// StreamHandled records the events up to through handled (durably:
	// a retry resumes after them) and returns the first not handled.
	StreamHandled(ctx context.Context, through int64) (int64, error)
}

// handleBatch is how many events one read asks for.
const handleBatch = 500

// Waits between reads of a stream that has no new event: from the first
// to the last, doubling.
const (
	minHandlePoll = 5 * time.Millisecond
	handlePollMax = 200 * time.Millisecond
)

// streamHandler is a streaming operator's handler: a command fed JSON
// lines (commandHandler) or a Go function (goHandler).
type streamHandler interface {
	// give hands the handler the next event, in order; an error is the
	// handler's failure.
	give(ctx context.Context, ev *core.StreamEvent) error
	// finish tells the handler the stream ended and waits for it: every
	// event given is handled when it returns nil.
	finish(ctx context.Context) error
	// stop ends the handler (a no-op after finish) and returns the first
	// sequence index it acknowledged not handling yet.
	stop() int64
}

// handleStream runs the try of a streaming operator resumed on its
// stream: from the first event not handled (the stream's consumption is
// the durable position), it gives the handler each event in sequence
// order as it is committed, recording progress as the handler
// acknowledges it, until the stream is closed and every event handled.
// A handler failure fails the try after recording what it handled, so a
// retry resumes at the event that failed. Its return value is
// {"stream_id", "handled"}.
func (r *Runner) handleStream(ctx context.Context, req *Request) (*Result, error) {
	src, ok := req.XCom.(StreamSource)
	if !ok {
		return nil, errors.New("this try has no Execution API client to read its stream from")
	}
	b, err := src.HandlerEvents(ctx, -1, handleBatch)
	if err != nil {
		return nil, err
	}
	pos := b.Handled
	req.logf("handling stream %s from sequence index %d", b.StreamID, pos)
	h, err := r.newStreamHandler(ctx, req, src, b.StreamID, pos)
	if err != nil {
		return nil, err
	}
	defer h.stop()
	wait := minHandlePoll
	for {
		for i, ev := range b.Events {
			if ev.SequenceIndex != pos+int64(i) {
				return nil, fmt.Errorf("stream %s: read event %d where %d was expected", b.StreamID, ev.SequenceIndex, pos+int64(i))
			}
		}
		if err := giveEvents(ctx, h, b.Events); err != nil {
			return nil, handlerFailed(b.StreamID, h.stop(), err)
		}
		pos += int64(len(b.Events))
		if b.Closed && pos >= b.NextIndex {
			break
		}
		if len(b.Events) > 0 {
			wait = minHandlePoll
		} else {
			if err := trigger.Sleep(ctx, wait); err != nil {
				return nil, fmt.Errorf("wait for events of stream %s: %w", b.StreamID, cancelled(ctx))
			}
			wait = min(2*wait, handlePollMax)
		}
		if b, err = src.HandlerEvents(ctx, pos, handleBatch); err != nil {
			return nil, err
		}
	}
	if err := h.finish(ctx); err != nil {
		return nil, handlerFailed(b.StreamID, h.stop(), err)
	}
	if b.Error != "" {
		return nil, fmt.Errorf("stream %s ended with an error after %d events, all handled: %s", b.StreamID, b.NextIndex, b.Error)
	}
	req.logf("handled stream %s: %d events", b.StreamID, pos)
	v, err := json.Marshal(map[string]any{"stream_id": b.StreamID, "handled": pos})
	return &Result{ReturnValue: v}, err
}

// handlerFailed is the error of a handler that failed having handled
// the events before sequence index handled: the one it failed at (or
// did not acknowledge), where a retry resumes.
func handlerFailed(stream string, handled int64, err error) error {
	return fmt.Errorf("the handler of stream %s failed at the event with sequence index %d (the events before it are handled; a retry resumes at it): %w",
		stream, handled, err)
}

// newStreamHandler starts the handler the task's args name, whose first
// event has sequence index from.
func (r *Runner) newStreamHandler(ctx context.Context, req *Request, src StreamSource, stream string, from int64) (streamHandler, error) {
	if name, _ := req.Args[core.ArgHandleFunction].(string); name != "" {
		fn, ok := r.Registry.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("go stream handler %q is not registered in this worker: %w", name, core.ErrNotFound)
		}
		g := goHandler{r: r, req: req, src: src, name: name, fn: fn, next: from}
		if r.Registry.TakesStreamBatches(name) {
			return &goBatchHandler{g}, nil
		}
		return &g, nil
	}
	command, err := stringArg(req.Args, core.ArgHandleCommand, true)
	if err != nil {
		return nil, err
	}
	return r.startCommandHandler(ctx, req, src, command, stream, from)
}

// goHandler calls a registered Go function once per event, recording
// each event handled as the function returns nil.
type goHandler struct {
	r    *Runner
	req  *Request
	src  StreamSource
	name string
	fn   GoFunc
	next int64 // the first sequence index not handled
}

// HandleKwargs is the next_kwargs a Go stream handler's call sees: the
// sequence index of the event (its payload is the resume event).
type HandleKwargs struct {
	SequenceIndex int64 `json:"sequence_index"`
}

func (g *goHandler) give(ctx context.Context, ev *core.StreamEvent) error {
	kw, err := json.Marshal(HandleKwargs{SequenceIndex: ev.SequenceIndex})
	if err != nil {
		return err
	}
	tc := g.r.goContext(g.req)
	tc.Resume = &Resume{Method: core.NextMethodStream, Kwargs: kw, Event: ev.Payload}
	if _, err := g.r.callGo(ctx, g.req, g.name, g.fn, tc); err != nil {
		return err
	}
	if _, err := g.src.StreamHandled(ctx, ev.SequenceIndex); err != nil {
		return fmt.Errorf("event %d was handled but could not be recorded (a retry handles it again): %w", ev.SequenceIndex, err)
	}
	g.next = ev.SequenceIndex + 1
	return nil
}

func (g *goHandler) finish(context.Context) error { return nil }

func (g *goHandler) stop() int64 { return g.next }
