package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/emission"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

// TestGoCallbackEmits checks the rules of a Go callback's emission
// (docs/go-sdk.md#callbacks): only its outlets, by name, with an
// idempotency key; each refusal creates nothing; the event carries the
// DAG-level callback's DAG and run and no task, and a repeated key returns
// the first receipt.
func TestGoCallbackEmits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	clk := clocktest.New(t0)
	svc := newSvc(st, clk)
	dag := core.DAG{DagID: "gocb", Assets: []core.Asset{{Name: "alerts", URI: "ops://alerts"}, {Name: "other", URI: "ops://other"}},
		Callbacks: &core.Callbacks{OnFailure: []core.CallbackSpec{{Function: "gocb#on_failure/0", Outlets: []string{"alerts"}}}},
		Tasks:     []core.Task{{TaskID: "a", Operator: "noop"}}}
	syncDAG(t, st, dag)
	run := runningRun(t, st, svc, "gocb")
	if ok, err := svc.FinishRun(ctx, run, &dag, core.RunFailed, t0); err != nil || !ok {
		t.Fatalf("finish run: %v %v", ok, err)
	}
	cbs, err := st.CallbackClaim(ctx, &store.CallbackClaimParams{WorkerID: "w", Limit: 1, Now: t0})
	if err != nil || len(cbs) != 1 {
		t.Fatalf("claim: %v %v", cbs, err)
	}
	cb := cbs[0]
	key := func(k string) emission.Request {
		pk := "gocb/" + run.RunID
		return emission.Request{Asset: core.AssetRef{Name: "alerts"}, PartitionKey: &pk, IdempotencyKey: &k}
	}
	refusals := []struct {
		name string
		req  emission.Request
		want error
		says string
	}{
		{"not an outlet", emission.Request{Asset: core.AssetRef{Name: "other"}, IdempotencyKey: ptr("k")}, core.ErrForbidden,
			`may emit only its outlets ("alerts"), not asset "other"`},
		{"by uri", emission.Request{Asset: core.AssetRef{URI: "ops://alerts"}, IdempotencyKey: ptr("k")}, core.ErrInvalid, "names the asset it emits by name"},
		{"no key", emission.Request{Asset: core.AssetRef{Name: "alerts"}}, core.ErrInvalid, "needs an idempotency key"},
		{"an empty key", key(""), core.ErrInvalid, `"idempotency_key" must not be empty`},
		{"a date without a key", emission.Request{Asset: core.AssetRef{Name: "alerts"}, PartitionDate: "2026-03-01T00:00:00Z", IdempotencyKey: ptr("k")},
			core.ErrInvalid, "partition"},
	}
	for _, r := range refusals {
		if _, err := svc.EmitFromCallback(ctx, cb.ID, cb.Attempts, r.req); !errors.Is(err, r.want) || !strings.Contains(err.Error(), r.says) {
			t.Errorf("%s: %v; want %v saying %q", r.name, err, r.want, r.says)
		}
	}
	if _, err := svc.EmitFromCallback(ctx, cb.ID, cb.Attempts+1, key("k")); !errors.Is(err, core.ErrConflict) {
		t.Errorf("another attempt's emission: %v, want ErrConflict", err)
	}
	if evs, err := st.AssetEventList(ctx, &store.AssetEventListParams{}); err != nil || len(evs) != 0 {
		t.Fatalf("refusals created events: %v %v", evs, err)
	}

	first, err := svc.EmitFromCallback(ctx, cb.ID, cb.Attempts, key("ops/1"))
	if err != nil || first.Duplicate {
		t.Fatalf("emit: %+v %v", first, err)
	}
	again, err := svc.EmitFromCallback(ctx, cb.ID, cb.Attempts, key("ops/1"))
	if err != nil || !again.Duplicate || again.EventID != first.EventID {
		t.Fatalf("repeat: %+v %v; want the first receipt, duplicate", again, err)
	}
	evs, err := st.AssetEventList(ctx, &store.AssetEventListParams{})
	if err != nil || len(evs) != 1 {
		t.Fatalf("events %v %v, want 1", evs, err)
	}
	ev := evs[0]
	if ev.SourceKind != core.AssetSourceCallback || ev.SourceDagID != "gocb" || ev.SourceRunID != run.RunID || ev.SourceTaskID != "" ||
		ev.SourceCallbackID != cb.ID || ev.CallbackDepth != 1 || ev.IdempotencyKey != "ops/1" {
		t.Errorf("event %+v; want source callback %d of gocb/%s, no task, depth 1, key ops/1", ev, cb.ID, run.RunID)
	}
}
