package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/builtin"
)

// streamSvc is a service over a fresh SQLite store whose registry has a
// streaming type "pages".
func streamSvc(t *testing.T) (*service.Service, store.Store, *clocktest.Clock) {
	t.Helper()
	st := sqlitetest.Open(t)
	reg := builtin.Registry()
	if err := reg.Register(trigger.Type{Name: "pages", Uses: trigger.UseStream, New: func(json.RawMessage) (trigger.Trigger, error) {
		return nil, nil
	}}); err != nil {
		t.Fatal(err)
	}
	clk := clocktest.New(t0)
	return service.New(service.Config{Store: st, Clock: clk, Triggers: reg, StreamMaxPending: 50}), st, clk
}

func TestOpenStreamRefusesBadInputAndCreatesNothing(t *testing.T) {
	svc, st, _ := streamSvc(t)
	ctx := t.Context()
	cases := []struct {
		open service.StreamOpen
		want string
	}{
		{service.StreamOpen{ID: ""}, "a stream id of 1 to 250 bytes is required"},
		{service.StreamOpen{ID: strings.Repeat("x", 251)}, "a stream id of 1 to 250 bytes is required, got 251 bytes"},
		{service.StreamOpen{ID: "a\nb"}, "holds a control character"},
		{service.StreamOpen{ID: "s", MaxPending: -1}, "max_pending must be between 1 and 1000000"},
		{service.StreamOpen{ID: "s", Trigger: core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"1s"}`)}},
			`trigger type "timedelta" does not produce a stream of events (types that stream: command, http_paginated, pages, sql_cursor)`},
		{service.StreamOpen{ID: "s", Trigger: core.TriggerSpec{Type: "nope"}}, `unknown trigger type "nope" (types that stream: command, http_paginated, pages, sql_cursor)`},
	}
	for _, c := range cases {
		_, err := svc.OpenStream(ctx, c.open)
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("OpenStream(%+v) = %v, want an invalid-input error containing %q", c.open, err, c.want)
		}
	}
	if n, err := st.TriggerCount(ctx, &store.TriggerListParams{}); err != nil || n != 0 {
		t.Errorf("triggers after refused opens = %d, %v; want 0", n, err)
	}
	if _, err := st.StreamGet(ctx, "s"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("stream s after refused opens: %v, want not found", err)
	}
	s, err := svc.OpenStream(ctx, service.StreamOpen{ID: "s"})
	if err != nil || s.MaxPending != 50 {
		t.Fatalf("open with the default bound = %+v, %v; want max_pending 50 (configured)", s, err)
	}
	if _, err := svc.OpenStream(ctx, service.StreamOpen{ID: "s"}); !errors.Is(err, core.ErrConflict) {
		t.Errorf("open s twice = %v, want a conflict", err)
	}
}

// TestAppendRefusesBadEventsAndAfterIsLast: an oversized
// or non-JSON event, a triggerer that does not hold the trigger, and an
// append after the stream closed are refused, and the stream is unchanged.
func TestAppendRefusesBadEventsAndAfterIsLast(t *testing.T) {
	svc, st, clk := streamSvc(t)
	ctx := t.Context()
	s, err := svc.OpenStream(ctx, service.StreamOpen{ID: "run-1", Trigger: core.TriggerSpec{Type: "pages"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.JobHeartbeat(ctx, &core.Job{ID: "tr1", Role: "triggerer", StartedAt: clk.Now(), Heartbeat: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.TriggerClaim(ctx, &store.TriggerClaimParams{TriggererID: "tr1", AliveSince: clk.Now().Add(-time.Minute), Limit: 1}); err != nil {
		t.Fatal(err)
	}
	ok := json.RawMessage(`{"page":1}`)
	big := json.RawMessage(`"` + strings.Repeat("x", core.MaxStreamPayloadBytes) + `"`)
	bad := []struct {
		triggerer string
		payloads  []json.RawMessage
		sentinel  error
		want      string
	}{
		{"tr1", []json.RawMessage{ok, big}, core.ErrInvalid, "event 2 of 2 is 1048578 bytes, more than the limit of 1048576 bytes per event"},
		{"tr1", []json.RawMessage{json.RawMessage(`{"page":`)}, core.ErrInvalid, "event 1 of 1 is not a JSON value"},
		{"tr1", nil, core.ErrInvalid, "no events given"},
		{"tr2", []json.RawMessage{ok}, core.ErrConflict, "is no longer run by triggerer tr2"},
	}
	for _, c := range bad {
		_, err := svc.AppendTriggerEvents(ctx, s.TriggerID, c.triggerer, "run-1", c.payloads)
		if !errors.Is(err, c.sentinel) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("append %d events as %s = %v, want %v containing %q", len(c.payloads), c.triggerer, err, c.sentinel, c.want)
		}
	}
	if got, _ := st.StreamGet(ctx, "run-1"); got.NextIndex != 0 {
		t.Fatalf("stream after refused appends = %+v, want no event", got)
	}
	res, err := svc.AppendTriggerEvents(ctx, s.TriggerID, "tr1", "run-1", []json.RawMessage{ok, ok})
	if err != nil || res.Accepted != 2 {
		t.Fatalf("append 2 = %+v, %v", res, err)
	}
	if err := svc.CloseTriggerStream(ctx, s.TriggerID, "tr1", "run-1", ""); err != nil {
		t.Fatal(err)
	}
	// The trigger went with the close; an append through the store itself
	// is refused as after is_last.
	if _, err := svc.AppendTriggerEvents(ctx, s.TriggerID, "tr1", "run-1", []json.RawMessage{ok}); !errors.Is(err, core.ErrConflict) {
		t.Errorf("append after close = %v, want a conflict", err)
	}
	_, err = st.StreamAppend(ctx, &store.StreamAppendParams{StreamID: "run-1", Payloads: []json.RawMessage{ok}, Now: clk.Now()})
	if !errors.Is(err, core.ErrConflict) || !strings.Contains(err.Error(), "it is closed (its last event has sequence index 1)") {
		t.Errorf("store append after is_last = %v", err)
	}
	if got, _ := st.StreamGet(ctx, "run-1"); got.NextIndex != 2 || !got.Closed {
		t.Errorf("stream = %+v, want 2 events, closed", got)
	}
	if _, err := svc.ConsumeStream(ctx, "run-1", 1, 0); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("consume 1..0 = %v, want invalid", err)
	}
}

// TestCleanStreamsKeepsEventsForTheRetention: consumed events are deleted
// once older than the retention, pending ones never.
func TestCleanStreamsKeepsEventsForTheRetention(t *testing.T) {
	svc, st, clk := streamSvc(t)
	ctx := context.Background()
	if _, err := svc.OpenStream(ctx, service.StreamOpen{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.StreamAppend(ctx, &store.StreamAppendParams{StreamID: "s", Payloads: []json.RawMessage{json.RawMessage(`1`), json.RawMessage(`2`)}, Now: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if n, err := svc.ConsumeStream(ctx, "s", 0, 0); err != nil || n != 1 {
		t.Fatalf("consume 0 = %d, %v", n, err)
	}
	clk.Advance(time.Hour)
	if n, err := svc.CleanStreams(ctx, 2*time.Hour); err != nil || n != 0 {
		t.Errorf("clean within the retention = %d, %v; want 0", n, err)
	}
	clk.Advance(2 * time.Hour)
	if n, err := svc.CleanStreams(ctx, 2*time.Hour); err != nil || n != 1 {
		t.Errorf("clean past the retention = %d, %v; want the consumed event", n, err)
	}
	evs, err := st.StreamEventList(ctx, &store.StreamEventListParams{StreamID: "s", After: -1, Limit: 10})
	if err != nil || len(evs) != 1 || evs[0].SequenceIndex != 1 {
		t.Errorf("events left = %+v, %v; want the pending one", evs, err)
	}
}
