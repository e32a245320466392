package weir

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/weirflow/weir/internal/operator"
)

// Streams marks the task as a stream producer (stream: true in a DAG
// file): while its try runs it pushes items with tc.Stream().Push, and
// every task with Iterate over it gets one mapped instance per item as
// items arrive (docs/streaming.md#pushes-from-a-running-task).
func Streams() TaskOption {
	return func(t *Task) {
		if t.inDefaults {
			t.problem("stream", "Streams cannot be a default arg; set it on each producer task")
			return
		}
		t.spec.Stream = true
	}
}

// Iterate maps the task lazily over producer's stream (iterate in a DAG
// file): one instance per item, map_index = the item's sequence index,
// created and run while the producer still produces; the item is the
// mapped argument "item" (MapArg[T](tc, "item")). Tasks downstream of
// this one run once the producer closed its stream and every instance is
// done. producer is a task with Streams, or a deferrable sensor whose
// trigger streams.
func Iterate(producer *Task) TaskOption {
	return func(t *Task) {
		switch {
		case t.inDefaults:
			t.problem("iterate", "Iterate cannot be a default arg; set it on each task")
		case producer == nil:
			t.problem("iterate", "Iterate: the producer task is nil")
		case producer.dag != t.dag:
			t.problem("iterate", "Iterate: task %q belongs to dag %q, not %q", producer.ID(), producer.dag.ID(), t.dag.ID())
		default:
			t.spec.Iterate = producer.ID()
		}
	}
}

// Stream is a producer task's stream in its run, as its try pushes to it.
// Safe for concurrent use; items keep the order of the Push calls.
type Stream struct {
	p    operator.Pusher
	mu   sync.Mutex
	next int64 // the sequence index of the next item; -1 until read
}

// Stream returns the stream the running try of a task with Streams
// pushes to: the same one at every call, so that Push's count of the
// stream's end is one. Outside a running try every call fails with
// ErrNoTry.
func (tc *TaskContext) Stream() *Stream {
	if tc == nil {
		return &Stream{p: operator.TaskContext{}.Pusher(), next: -1}
	}
	tc.stream.Do(func() { tc.pusher = &Stream{p: tc.op.Pusher(), next: -1} })
	return tc.pusher
}

// Next returns how many items the stream holds: the sequence index the
// next Push gets. A retry of the producer reads it to resume after what an
// earlier try pushed: Push appends, so a retry that starts over and
// pushes the same items again adds them again (PushAt does not).
func (s *Stream) Next(ctx context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.position(ctx)
}

func (s *Stream) position(ctx context.Context) (int64, error) {
	if s.next < 0 {
		h, err := s.p.StreamHead(ctx)
		if err != nil {
			return 0, err
		}
		s.next = h.NextIndex
	}
	return s.next, nil
}

// Push appends item (encoded as JSON, at most 1 MiB) to the stream: it
// gets the sequence index after the stream's last item (Next). It returns
// once the item is persisted, waiting while the stream holds max_pending
// items not yet expanded. Errors: a task without Streams or a bad item
// (ErrInvalid), a closed stream (ErrConflict).
func (s *Stream) Push(ctx context.Context, item any) error {
	return s.pushItem(ctx, -1, item)
}

// PushAt pushes item as the stream's item index, as `weir stream push
// --index` does: an index the stream holds already is skipped (a retry
// that pushes again what an earlier try pushed adds nothing), one past
// the stream's end is refused (ErrConflict). Otherwise as Push.
func (s *Stream) PushAt(ctx context.Context, index int64, item any) error {
	if index < 0 {
		return fmt.Errorf("push to the stream: index %d is negative: %w", index, ErrInvalid)
	}
	return s.pushItem(ctx, index, item)
}

func (s *Stream) pushItem(ctx context.Context, index int64, item any) error {
	b, err := json.Marshal(item)
	if err != nil {
		return fmt.Errorf("push to the stream: encode the item: %w", err)
	}
	return s.push(ctx, index, []json.RawMessage{b}, false)
}

// Close closes the stream: no more items. A producer that returns without
// closing has its stream closed for it.
func (s *Stream) Close(ctx context.Context) error { return s.push(ctx, -1, nil, true) }

// push sends items from sequence index from (-1: the stream's end).
func (s *Stream) push(ctx context.Context, from int64, items []json.RawMessage, closing bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if from < 0 {
		var err error
		if from, err = s.position(ctx); err != nil {
			return err
		}
	}
	h, err := s.p.PushStream(ctx, from, items, closing)
	if err != nil {
		return err
	}
	s.next = h.NextIndex
	return nil
}
