package triggerer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/wait"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/builtin"
)

// pages is a streaming trigger type for tests: kwargs {"n": N, "batch": B}
// emit items {"i": 0..N-1}, B per EmitBatch, resuming after the stream's
// last persisted event as a streaming trigger must. starts records the
// LastIndex each run was given.
type pages struct {
	mu     sync.Mutex
	starts []int64
}

func (p *pages) register(t testing.TB, reg *trigger.Registry) {
	t.Helper()
	must(t, reg.Register(trigger.Type{Name: "pages", Uses: trigger.UseStream, New: func(raw json.RawMessage) (trigger.Trigger, error) {
		var kw struct{ N, Batch int }
		if err := json.Unmarshal(raw, &kw); err != nil {
			return nil, err
		}
		kw.Batch = max(kw.Batch, 1)
		return runFunc(func(ctx context.Context, rt *trigger.Runtime) error {
			p.mu.Lock()
			p.starts = append(p.starts, rt.Stream.LastIndex)
			p.mu.Unlock()
			for i := int(rt.Stream.LastIndex) + 1; i < kw.N; i += kw.Batch {
				var batch []any
				for j := i; j < min(i+kw.Batch, kw.N); j++ {
					batch = append(batch, map[string]int{"i": j})
				}
				if err := rt.EmitBatch(ctx, batch...); err != nil {
					return err
				}
			}
			return nil
		}), nil
	}}))
}

func (p *pages) runs() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int64(nil), p.starts...)
}

// streamEnv is a store of engine open, a registry with the pages type,
// and a service over both.
func streamEnv(t testing.TB, open func(t testing.TB) store.Store) (store.Store, *service.Service, *trigger.Registry, *pages) {
	t.Helper()
	st := open(t)
	reg := builtin.Registry()
	p := &pages{}
	p.register(t, reg)
	return st, service.New(service.Config{Store: st, Triggers: reg}), reg, p
}

// openPages opens stream id produced by a pages trigger of n items.
func openPages(t testing.TB, svc *service.Service, id string, n, batch, maxPending int) *core.Stream {
	t.Helper()
	st, err := svc.OpenStream(t.Context(), service.StreamOpen{ID: id, MaxPending: maxPending,
		Trigger: core.TriggerSpec{Type: "pages", Kwargs: json.RawMessage(fmt.Sprintf(`{"n":%d,"batch":%d}`, n, batch))}})
	must(t, err)
	return st
}

// checkStream fails unless stream id holds events {"i": 0..n-1} once each,
// in order, only the last is_last.
func checkStream(t *testing.T, st store.Store, id string, n int) {
	t.Helper()
	evs, err := st.StreamEventList(t.Context(), &store.StreamEventListParams{StreamID: id, After: -1, Limit: n + 10})
	must(t, err)
	if len(evs) != n {
		t.Fatalf("stream %s holds %d events, want %d", id, len(evs), n)
	}
	for i, e := range evs {
		want := fmt.Sprintf(`{"i":%d}`, i)
		if e.SequenceIndex != int64(i) || string(e.Payload) != want || e.IsLast != (i == n-1) {
			t.Fatalf("event %d = {seq %d, %s, is_last %v}, want {seq %d, %s, is_last %v}", i, e.SequenceIndex, e.Payload, e.IsLast, i, want, i == n-1)
		}
	}
}

func closed(t testing.TB, st store.Store, id string) func() bool {
	return func() bool {
		s, err := st.StreamGet(t.Context(), id)
		return err == nil && s.Closed
	}
}

// TestStreamTriggerPersistsEveryEventInOrder: a streaming trigger's events
// are envelopes with consecutive sequence indexes; when its run ends the
// last is is_last, the stream is closed and the trigger deleted.
func TestStreamTriggerPersistsEveryEventInOrder(t *testing.T) {
	for name, open := range engines() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, svc, reg, p := streamEnv(t, open)
			s := openPages(t, svc, "run-1", 250, 7, 1000)
			start(t, st, svc, reg, 0)
			wait.Until(t, 60*time.Second, "the stream to close", closed(t, st, "run-1"))
			checkStream(t, st, "run-1", 250)
			got, _ := st.StreamGet(t.Context(), "run-1")
			if got.Error != "" || got.Pending != 250 || got.TriggerID != 0 {
				t.Errorf("closed stream = %+v, want no error, 250 pending, its trigger gone", got)
			}
			if _, err := st.TriggerGet(t.Context(), s.TriggerID); err == nil {
				t.Errorf("trigger %d still exists after its stream closed", s.TriggerID)
			}
			if runs := p.runs(); len(runs) != 1 || runs[0] != -1 {
				t.Errorf("runs started at %v, want one from the start (-1)", runs)
			}
		})
	}
}

// TestStreamProducerStaysWithinMaxPending: a producer much faster than its
// consumer waits for room: before anything is consumed it fills the stream
// up to max_pending, and the pending count, sampled at every consumption,
// never exceeds it.
func TestStreamProducerStaysWithinMaxPending(t *testing.T) {
	for name, open := range engines() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, svc, reg, _ := streamEnv(t, open)
			const n, bound = 120, 7
			openPages(t, svc, "fast", n, 5, bound)
			start(t, st, svc, reg, 0)
			ctx := t.Context()
			// Held back at the bound: the consumer starts only then, so
			// that a consumer as quick as the producer cannot hide it.
			wait.Until(t, 60*time.Second, "the producer to fill max_pending", func() bool {
				s, err := st.StreamGet(ctx, "fast")
				return err == nil && s.Pending >= bound
			})
			for next := int64(0); next < n; {
				var s *core.Stream
				wait.Until(t, 60*time.Second, fmt.Sprintf("event %d", next), func() bool {
					var err error
					s, err = st.StreamGet(ctx, "fast")
					return err == nil && s.NextIndex > next
				})
				if s.Pending > bound {
					t.Fatalf("%d events pending, more than max_pending %d", s.Pending, bound)
				}
				if _, err := svc.ConsumeStream(ctx, "fast", next, next); err != nil {
					t.Fatal(err)
				}
				next++
			}
			wait.Until(t, 60*time.Second, "the stream to close", closed(t, st, "fast"))
			checkStream(t, st, "fast", n)
		})
	}
}

// TestStreamResumesAfterTheLastEventOnAnotherTriggerer: a triggerer stops
// mid-stream without closing anything (its producer waits on a full
// stream); another takes the trigger over, its run is told the last
// persisted sequence index and resumes after it: no event is lost or
// persisted twice.
func TestStreamResumesAfterTheLastEventOnAnotherTriggerer(t *testing.T) {
	for name, open := range engines() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, svc, reg, p := streamEnv(t, open)
			const n, bound = 90, 40
			openPages(t, svc, "crash", n, 3, bound)
			_, stopFirst := start(t, st, svc, reg, 0)
			wait.Until(t, 60*time.Second, "the stream to fill up", func() bool {
				s, err := st.StreamGet(t.Context(), "crash")
				return err == nil && s.Pending == bound
			})
			stopFirst()
			start(t, st, svc, reg, 0)
			if _, err := svc.ConsumeStream(t.Context(), "crash", 0, n); err != nil {
				t.Fatal(err)
			}
			for consumed := bound; consumed < n; {
				wait.Until(t, 60*time.Second, "more events", func() bool {
					s, err := st.StreamGet(t.Context(), "crash")
					return err == nil && s.NextIndex > int64(consumed)
				})
				c, err := svc.ConsumeStream(t.Context(), "crash", int64(consumed), n)
				must(t, err)
				consumed += c
			}
			wait.Until(t, 60*time.Second, "the stream to close", closed(t, st, "crash"))
			checkStream(t, st, "crash", n)
			if runs := p.runs(); len(runs) != 2 || runs[0] != -1 || runs[1] != bound-1 {
				t.Errorf("runs started after %v, want [-1 %d]: the second resumes after the last persisted event", runs, bound-1)
			}
		})
	}
}

// TestFailingStreamTriggerClosesItsStreamWithTheReason: a streaming
// trigger that fails closes its stream with the reason; the events it
// committed stay, the last marked is_last.
func TestFailingStreamTriggerClosesItsStreamWithTheReason(t *testing.T) {
	st := engines()["sqlite"](t)
	reg := builtin.Registry()
	must(t, reg.Register(trigger.Type{Name: "breaks", Uses: trigger.UseStream, New: func(json.RawMessage) (trigger.Trigger, error) {
		return runFunc(func(ctx context.Context, rt *trigger.Runtime) error {
			if err := rt.EmitBatch(ctx, map[string]int{"i": 0}, map[string]int{"i": 1}); err != nil {
				return err
			}
			return fmt.Errorf("page 3: HTTP 500")
		}), nil
	}}))
	svc := service.New(service.Config{Store: st, Triggers: reg})
	_, err := svc.OpenStream(t.Context(), service.StreamOpen{ID: "broken", Trigger: core.TriggerSpec{Type: "breaks"}})
	must(t, err)
	start(t, st, svc, reg, 0)
	wait.Until(t, 60*time.Second, "the stream to close", closed(t, st, "broken"))
	s, _ := st.StreamGet(t.Context(), "broken")
	if s.Error != "the breaks trigger failed: page 3: HTTP 500" || s.MaxPending != core.DefaultStreamMaxPending {
		t.Errorf("stream = %+v, want the failure's reason and the default max_pending", s)
	}
	checkStream(t, st, "broken", 2)
}
