package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// fakeStream is a stream of n events {"n": i+1} that a fake trigger
// produces 10 at a time (each read adds 10), with the handled position
// a StreamSource records: a fake of the Execution API, not of the
// database.
type fakeStream struct {
	mu       sync.Mutex
	n        int64
	produced int64
	handled  int64
	records  int
}

func (f *fakeStream) XComPush(context.Context, string, any) error { return errors.New("no xcom") }
func (f *fakeStream) XComPull(context.Context, string, string, int) (json.RawMessage, error) {
	return nil, errors.New("no xcom")
}

func (f *fakeStream) HandlerEvents(_ context.Context, from int64, limit int) (*execclient.HandlerBatch, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.produced = min(f.produced+10, f.n)
	if from < 0 {
		from = f.handled
	}
	b := &execclient.HandlerBatch{StreamID: "s", Handled: f.handled, NextIndex: f.produced, Closed: f.produced == f.n}
	for i := from; i < f.produced && len(b.Events) < limit; i++ {
		b.Events = append(b.Events, core.StreamEvent{StreamID: "s", SequenceIndex: i, Payload: json.RawMessage(fmt.Sprintf(`{ "n": %d }`, i+1))})
	}
	return b, nil
}

func (f *fakeStream) StreamHandled(_ context.Context, through int64) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if through >= f.produced {
		return 0, fmt.Errorf("through %d past the end %d: %w", through, f.produced, core.ErrInvalid)
	}
	f.records++
	f.handled = max(f.handled, through+1)
	return f.handled, nil
}

func handlerReq(src *fakeStream, args map[string]any, try int) (*Request, *logBuf) {
	log := &logBuf{}
	return &Request{
		TI:     core.TaskInstance{DagID: "d", RunID: "r", TaskID: "load", MapIndex: -1, TryNumber: try},
		Task:   core.Task{TaskID: "load", Operator: Sensor, Args: args},
		Args:   args,
		Log:    log,
		XCom:   src,
		Resume: &Resume{Method: core.NextMethodStream, Event: json.RawMessage(`{"stream_id":"s"}`)},
	}, log
}

// handlerScript appends each event's n to out and acknowledges it, but
// fails on event failAt unless mark exists (it creates it).
func handlerScript(out, mark string, failAt int) string {
	return fmt.Sprintf(`while read -r ev; do
  n=${ev//[^0-9]/}
  if [ "$n" = %d ] && [ ! -e %q ]; then touch %q; exit 4; fi
  echo "$n" >> %q
  echo ok >&3
done`, failAt, mark, mark, out)
}

func readHandled(t *testing.T, out string) []string {
	t.Helper()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// TestCommandHandlerResumesAtTheFailedEvent: a handle_command reading
// JSON lines fails on event 37; the try fails naming the position, the
// events it acknowledged (1..36) are recorded handled, and the next try
// starts its command at sequence index 36 ($WEIR_STREAM_FROM) and handles
// 37..100 — each event once, in order.
func TestCommandHandlerResumesAtTheFailedEvent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, mark := filepath.Join(dir, "out"), filepath.Join(dir, "mark")
	src := &fakeStream{n: 100}
	args := map[string]any{core.ArgHandleCommand: `echo "from $WEIR_STREAM_FROM of $WEIR_STREAM_ID"; ` + handlerScript(out, mark, 37)}
	r := &Runner{}
	req, _ := handlerReq(src, args, 1)
	_, err := r.Run(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "sequence index 36") || !strings.Contains(err.Error(), "exited with code 4") {
		t.Fatalf("first try = %v, want a failure at sequence index 36 (exit code 4)", err)
	}
	if src.handled != 36 {
		t.Fatalf("after the failure, events before %d are recorded handled, want 36", src.handled)
	}
	req, log := handlerReq(src, args, 2)
	res, err := r.Run(context.Background(), req)
	if err != nil {
		t.Fatalf("second try: %v\n%s", err, log)
	}
	if !strings.Contains(log.String(), "from 36 of s") {
		t.Errorf("the second try's command did not start at 36:\n%s", log)
	}
	got := readHandled(t, out)
	if len(got) != 100 {
		t.Fatalf("%d events handled, want 100: %v", len(got), got)
	}
	for i, n := range got {
		if n != fmt.Sprint(i+1) {
			t.Fatalf("handled[%d] = %s, want %d (in order, once each)", i, n, i+1)
		}
	}
	if src.handled != 100 || string(res.ReturnValue) != `{"handled":100,"stream_id":"s"}` {
		t.Errorf("handled = %d, return %s; want 100", src.handled, res.ReturnValue)
	}
}

// TestCommandHandlerExitZeroAcknowledgesAll: a command that reads every
// line and exits 0 without writing to fd 3 has handled every event.
func TestCommandHandlerExitZeroAcknowledgesAll(t *testing.T) {
	t.Parallel()
	src := &fakeStream{n: 25}
	req, log := handlerReq(src, map[string]any{core.ArgHandleCommand: "wc -l"}, 1)
	if _, err := (&Runner{}).Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if src.handled != 25 || !strings.Contains(log.String(), "25") {
		t.Errorf("handled = %d, log:\n%s; want 25 lines read and all handled", src.handled, log)
	}
}

// TestCommandHandlerExitingEarlyFails: a command that stops before the end
// of the stream (exit 0 without reading on) fails the try; what it
// acknowledged stays handled.
func TestCommandHandlerExitingEarlyFails(t *testing.T) {
	t.Parallel()
	src := &fakeStream{n: 5000}
	req, _ := handlerReq(src, map[string]any{core.ArgHandleCommand: "read -r a; echo ok >&3; exit 0"}, 1)
	_, err := (&Runner{}).Run(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "sequence index 1") {
		t.Fatalf("run = %v, want a failure at sequence index 1", err)
	}
	if src.handled != 1 {
		t.Errorf("handled = %d, want 1 (the acknowledged event)", src.handled)
	}
}

// TestGoHandlerResumesAtTheFailedEvent: a Go handler is called once per
// event in order; its error on event 37 fails the try with 1..36
// recorded, and the next try calls it from 37.
func TestGoHandlerResumesAtTheFailedEvent(t *testing.T) {
	t.Parallel()
	var seen []int64
	failed := false
	reg := NewRegistry()
	err := reg.Register("d.load#__stream__", func(_ context.Context, tc TaskContext) (any, error) {
		var kw HandleKwargs
		if err := json.Unmarshal(tc.Resume.Kwargs, &kw); err != nil {
			return nil, err
		}
		var ev struct{ N int64 }
		if err := json.Unmarshal(tc.Resume.Event, &ev); err != nil || ev.N != kw.SequenceIndex+1 {
			return nil, fmt.Errorf("event %s at %d", tc.Resume.Event, kw.SequenceIndex)
		}
		if ev.N == 37 && !failed {
			failed = true
			return nil, errors.New("cannot insert 37")
		}
		seen = append(seen, ev.N)
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	failThenRetry(t, reg, 36, &seen)
}

// failThenRetry runs two tries of the Go handler registered in reg as
// d.load#__stream__ over a fakeStream of 100 events: the first must fail
// with the handler's error on event 37 (n), naming sequence index handled
// and having recorded the events before it; the second must handle the
// rest. seen, the n of the events the handler's successful calls handled,
// must then hold every event once, in order.
func failThenRetry(t *testing.T, reg *Registry, handled int64, seen *[]int64) {
	t.Helper()
	src := &fakeStream{n: 100}
	r := &Runner{Registry: reg}
	args := map[string]any{core.ArgHandleFunction: "d.load#__stream__"}
	req, _ := handlerReq(src, args, 1)
	if _, err := r.Run(context.Background(), req); err == nil || !strings.Contains(err.Error(), "cannot insert 37") ||
		!strings.Contains(err.Error(), fmt.Sprintf("sequence index %d ", handled)) {
		t.Fatalf("first try = %v, want the handler's error naming sequence index %d", err, handled)
	}
	if src.handled != handled || int64(len(*seen)) != handled {
		t.Fatalf("handled %d, %d events by successful calls; want %d", src.handled, len(*seen), handled)
	}
	req, _ = handlerReq(src, args, 2)
	if _, err := r.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	for i, n := range *seen {
		if n != int64(i+1) {
			t.Fatalf("event %d is %d: want every event once by a successful call, in order", i, n)
		}
	}
	if len(*seen) != 100 || src.handled != 100 {
		t.Errorf("handled %d, %d events by successful calls; want 100", src.handled, len(*seen))
	}
}

// TestGoBatchHandlerRetriesTheFailedBatch: a Go batch handler gets the
// events committed since its previous call, in order; its error on the
// batch holding event 37 fails the try with only the batches before it
// recorded, and the next try calls it again from that batch's first
// event, so no event is handled twice by a successful call.
func TestGoBatchHandlerRetriesTheFailedBatch(t *testing.T) {
	t.Parallel()
	var seen, firsts []int64
	failed := false
	reg := NewRegistry()
	err := reg.RegisterStreamBatch("d.load#__stream__", func(_ context.Context, tc TaskContext) (any, error) {
		var kw HandleBatchKwargs
		var evs []core.StreamEvent
		if err := json.Unmarshal(tc.Resume.Kwargs, &kw); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(tc.Resume.Event, &evs); err != nil || len(evs) != kw.Count || evs[0].SequenceIndex != kw.SequenceIndex {
			return nil, fmt.Errorf("batch %s with %+v", tc.Resume.Event, kw)
		}
		firsts = append(firsts, kw.SequenceIndex)
		var ns []int64
		for _, ev := range evs {
			var p struct{ N int64 }
			if err := json.Unmarshal(ev.Payload, &p); err != nil || p.N != ev.SequenceIndex+1 {
				return nil, fmt.Errorf("event %s at %d", ev.Payload, ev.SequenceIndex)
			}
			if p.N == 37 && !failed {
				failed = true
				return nil, errors.New("cannot insert 37")
			}
			ns = append(ns, p.N)
		}
		seen = append(seen, ns...)
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	failThenRetry(t, reg, 30, &seen) // each read adds 10 events: batches of 10
	if firsts[3] != 30 || firsts[4] != 30 || len(firsts) >= 100 {
		t.Errorf("batches started at %v: want the retry's first batch to start at 30, and batches of several events", firsts)
	}
}
