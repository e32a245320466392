package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// StreamPush is a push of items by a running producer task (a task with
// stream: true) to its run's stream (docs/streaming.md#pushes-from-a-running-task).
type StreamPush struct {
	// From is the sequence index of Items[0]; nil appends at the end. With
	// it, items already persisted are skipped (a retried request, or a
	// retry of the try pushing again), so a push is idempotent per
	// sequence index.
	From  *int64
	Items []json.RawMessage
	// Close closes the stream after the items (its last envelope is_last).
	Close bool
}

// PushFromTry appends p.Items to the stream of ti's task in ti's run
// (core.TaskStreamID), creating it at the first push, bounded by
// [triggerer] stream_max_pending. Refused with nothing changed:
// a task without stream: true or bad items (core.ErrInvalid naming the
// problem), a closed stream or a From past the stream's end
// (core.ErrConflict naming its last sequence index).
func (s *Service) PushFromTry(ctx context.Context, ti *core.TaskInstance, p StreamPush) (*core.StreamPushResult, error) {
	what := "push to the stream of " + runs.Describe(ti)
	id, err := s.producerStream(ctx, ti)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(p.Items) > 0 {
		if err := CheckStreamPayloads(p.Items); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	} else if !p.Close {
		return nil, fmt.Errorf("%s: no items given: %w", what, core.ErrInvalid)
	}
	if p.From != nil && *p.From < 0 {
		return nil, fmt.Errorf("%s: the sequence index of the first item must be at least 0, got %d: %w", what, *p.From, core.ErrInvalid)
	}
	res := &core.StreamPushResult{StreamID: id}
	err = s.st.WithTx(ctx, func(tx store.Store) error {
		head, err := tx.StreamGet(ctx, id)
		if errors.Is(err, core.ErrNotFound) {
			head, err = tx.StreamCreate(ctx, &store.StreamCreateParams{ID: id, MaxPending: s.maxPending, Now: s.clock.Now()})
		}
		if err != nil {
			return err
		}
		items := p.Items
		if p.From != nil {
			switch {
			case *p.From > head.NextIndex:
				return fmt.Errorf("the first item has sequence index %d but the stream holds %d items (its next index is %d): %w",
					*p.From, head.NextIndex, head.NextIndex, core.ErrConflict)
			case head.NextIndex-*p.From >= int64(len(items)):
				res.Skipped, items = len(items), nil
			default:
				res.Skipped = int(head.NextIndex - *p.From)
				items = items[res.Skipped:]
			}
		}
		if head.Closed {
			if len(items) == 0 && (p.Close || res.Skipped > 0) {
				res.NextIndex, res.Pending, res.Closed = head.NextIndex, head.Pending, true
				return nil // a repeat of what closed it
			}
			return fmt.Errorf("stream %s is closed (its last item has sequence index %d); nothing was appended: %w", id, head.LastIndex(), core.ErrConflict)
		}
		if len(items) == 0 {
			if p.Close {
				head, err = tx.StreamClose(ctx, &store.StreamCloseParams{StreamID: id, Now: s.clock.Now()})
			}
			res.NextIndex, res.Pending, res.Closed = head.NextIndex, head.Pending, head.Closed
			return err
		}
		ar, err := tx.StreamAppend(ctx, &store.StreamAppendParams{StreamID: id, Payloads: items, Last: p.Close, Now: s.clock.Now()})
		if err != nil {
			return err
		}
		res.Accepted, res.NextIndex, res.Pending, res.Closed = ar.Accepted, ar.Stream.NextIndex, ar.Stream.Pending, ar.Stream.Closed
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if res.Accepted > 0 || res.Closed {
		s.notify(ctx, store.ChannelStream)
	}
	return res, nil
}

// TryStream returns the stream of ti's task in ti's run, as pushes left
// it; an empty, open one (next index 0) before the first push. A task
// without stream: true is core.ErrInvalid.
func (s *Service) TryStream(ctx context.Context, ti *core.TaskInstance) (*core.Stream, error) {
	id, err := s.producerStream(ctx, ti)
	if err != nil {
		return nil, fmt.Errorf("read the stream of %s: %w", runs.Describe(ti), err)
	}
	st, err := s.st.StreamGet(ctx, id)
	if errors.Is(err, core.ErrNotFound) {
		return &core.Stream{ID: id, MaxPending: s.maxPending}, nil
	}
	return st, err
}

// producerStream returns the id of the stream ti's task pushes to, or
// core.ErrInvalid when the task does not declare stream: true.
func (s *Service) producerStream(ctx context.Context, ti *core.TaskInstance) (string, error) {
	v, err := s.DagVersion(ctx, ti.DagVersionID)
	if err != nil {
		return "", err
	}
	if t := v.Spec.Task(ti.TaskID); t == nil || !t.Stream {
		return "", fmt.Errorf("task %q does not declare stream: true, so it has no stream to push to: %w", ti.TaskID, core.ErrInvalid)
	}
	return core.TaskStreamID(ti.DagRunID, ti.TaskID), nil
}
