package execapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/store"
)

// docs/emission.md, docs/requirements.md#e-1 to #e-4 over HTTP on both engines: a running try
// emits events of its outlets (and through its alias outlet) that commit
// at once, are queued for consumers and stay when the try fails; a
// repeated idempotency key — from another try too — returns the first
// receipt; bad input is refused with nothing created; the try's state is
// untouched and its success still records its outlet event.
func TestEmitFromRunningTry(t *testing.T) {
	t.Parallel()
	onEngines(t, testEmit)
}

// onEngines runs fn as a parallel subtest on SQLite and on PostgreSQL,
// each over a fresh Execution API.
func onEngines(t *testing.T, fn func(*testing.T, *execapitest.Env)) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			fn(t, execapitest.NewOn(t, openEngine(t, engine), execapi.Config{}))
		})
	}
}

func testEmit(t *testing.T, env *execapitest.Env) {
	ctx := t.Context()
	assets := []core.Asset{{Name: "orders", URI: "s3://lake/orders"}, {Name: "customers", URI: "s3://lake/customers"},
		{Name: "exports_eu", URI: "s3://lake/exports/eu"}}
	dag := core.DAG{DagID: "prod", Assets: assets, Tasks: []core.Task{
		{TaskID: "load", Operator: "noop", Inlets: []core.AssetRef{{Name: "customers"}},
			Outlets: []core.AssetRef{{Name: "orders"}, {Alias: "exports"}}},
		{TaskID: "again", Operator: "noop", Outlets: []core.AssetRef{{URI: "s3://lake/orders"}}},
	}}
	cons := core.DAG{DagID: "cons", Assets: assets[:1], AssetSchedule: []core.AssetRef{{Name: "orders"}},
		Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}}
	wls := runAssetDags(t, env, dag, cons)
	load, again := taskClient(env, wls["load"]), taskClient(env, wls["again"])
	batch1 := "batch-1"
	first, err := load.Emit(ctx, execclient.EmitRequest{Asset: core.AssetRef{Name: "orders"}, PartitionKey: &batch1,
		PartitionDate: "2026-03-01T00:00:00+01:00", Extra: json.RawMessage(`{"rows": 10, "password": "hunter2"}`),
		IdempotencyKey: ptr("prod/orders/batch-1")})
	if err != nil {
		t.Fatal(err)
	}
	if first.Duplicate || first.Name != "orders" || first.EventID == 0 || *first.PartitionKey != batch1 ||
		first.PartitionDate.UTC().Format("2006-01-02T15:04Z") != "2026-02-28T23:00Z" || !first.Timestamp.Equal(env.Clock.Now()) {
		t.Errorf("receipt = %+v, want a new event of orders in batch-1 dated 2026-02-28T23:00Z at the server's time", first)
	}
	// The same key again, from another try of another task: the first receipt.
	dup, err := again.Emit(ctx, execclient.EmitRequest{Asset: core.AssetRef{URI: "s3://lake/orders"}, PartitionKey: &batch1,
		PartitionDate: "2026-02-28T23:00:00Z", IdempotencyKey: ptr("prod/orders/batch-1")})
	if err != nil {
		t.Fatal(err)
	}
	if !dup.Duplicate || dup.EventID != first.EventID {
		t.Errorf("repeated key: receipt %+v, want event %d marked duplicate", dup, first.EventID)
	}
	gen, err := load.Emit(ctx, execclient.EmitRequest{Asset: core.AssetRef{Name: "exports_eu"}, Alias: "exports"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(gen.IdempotencyKey, "weir-") || gen.PartitionKey != nil {
		t.Errorf("receipt without a key = %+v, want a key the client made up and no partition", gen)
	}

	refused := []struct {
		req    execclient.EmitRequest
		status int
		detail string
	}{
		{execclient.EmitRequest{Asset: core.AssetRef{Name: "customers"}}, http.StatusForbidden,
			`may not emit events for asset customers: it is not one of the task's outlets (its outlets: assets "orders"; aliases "exports")`},
		{execclient.EmitRequest{Asset: core.AssetRef{Name: "orders"}, Alias: "dyn"}, http.StatusForbidden, `through alias "dyn"`},
		{execclient.EmitRequest{Asset: core.AssetRef{Name: "orders"}, PartitionDate: "2026-03-01T00:00:00Z"},
			http.StatusBadRequest, `"partition_date" "2026-03-01T00:00:00Z" needs a "partition_key"`},
		{execclient.EmitRequest{Asset: core.AssetRef{Name: "orders"}, Extra: json.RawMessage(`{"blob":"` + strings.Repeat("x", 17<<10) + `"}`)},
			http.StatusRequestEntityTooLarge, `"extra" is 17419 bytes, more than the 16384 allowed`},
		{execclient.EmitRequest{Asset: core.AssetRef{Name: "orders"}, IdempotencyKey: ptr("prod/orders/batch-1")},
			http.StatusConflict, `in partition "batch-1" dated 2026-02-28T23:00:00Z; a repeated emission must name the same partition and date`},
		{execclient.EmitRequest{Asset: core.AssetRef{Name: "orders"}, IdempotencyKey: ptr("")},
			http.StatusBadRequest, `"idempotency_key" must not be empty`},
		{execclient.EmitRequest{Asset: core.AssetRef{Name: "gone"}, Alias: "exports"}, http.StatusNotFound, `asset named "gone"`},
	}
	for _, tc := range refused {
		_, err := load.Emit(ctx, tc.req)
		status(t, err, tc.status, tc.detail)
	}
	// A key names one event of its asset: another asset's is another event.
	if r, err := load.Emit(ctx, execclient.EmitRequest{Asset: core.AssetRef{Name: "exports_eu"}, Alias: "exports",
		IdempotencyKey: ptr("prod/orders/batch-1")}); err != nil || r.Duplicate || r.Name != "exports_eu" {
		t.Errorf("orders' key on exports_eu = %+v, %v; want a new event of exports_eu", r, err)
	}
	if ti := env.TI(t, wls["load"].TI.ID); ti.State != core.TIRunning {
		t.Errorf("load is %s after emitting, want still running", ti.State)
	}

	// load succeeds (its outlet's normal event follows), again fails (its
	// emission stays), and a finished try emits nothing.
	if _, err := load.SetState(ctx, wls["load"].TI.ID, core.TISuccess); err != nil {
		t.Fatal(err)
	}
	if _, err := again.SetState(ctx, wls["again"].TI.ID, core.TIFailed); err != nil {
		t.Fatal(err)
	}
	_, err = again.Emit(ctx, execclient.EmitRequest{Asset: core.AssetRef{Name: "orders"}})
	status(t, err, http.StatusForbidden, "not running")

	evs, err := env.Store.AssetEventList(ctx, &store.AssetEventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Name+"/"+ev.SourceTaskID+"/"+ev.IdempotencyKey+"/"+string(ev.Extra))
	}
	want := []string{`orders/load/prod/orders/batch-1/{"password":"***","rows":10}`, "exports_eu/load/" + gen.IdempotencyKey + "/{}",
		"exports_eu/load/prod/orders/batch-1/{}", "orders/load//{}"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("events:\n %v\nwant\n %v", got, want)
	}
	q, err := env.Store.AssetQueueList(ctx, "cons")
	if err != nil || len(q) != 1 || q[0].FirstEventID != first.EventID {
		t.Errorf("queue of cons = %+v (%v), want orders from event %d", q, err, first.EventID)
	}
	aliases, err := env.Store.AssetAliasList(ctx, &store.AssetAliasListParams{})
	if err != nil || len(aliases) != 1 || len(aliases[0].Assets) != 1 || aliases[0].Assets[0].Name != "exports_eu" {
		t.Errorf("aliases = %+v (%v), want exports resolving to exports_eu since its emission", aliases, err)
	}
}

// A running producer task (stream: true) pushes items over HTTP on both
// engines: a push is idempotent per sequence index, closing is final, and
// bad input — a push after the close, an item over 1 MiB, a gap, a task
// without stream: true — is refused naming the problem, nothing changed.
func TestStreamPushFromRunningTry(t *testing.T) {
	t.Parallel()
	onEngines(t, testStreamPush)
}

func testStreamPush(t *testing.T, env *execapitest.Env) {
	ctx := t.Context()
	dag := core.DAG{DagID: "prod", Tasks: []core.Task{
		{TaskID: "produce", Operator: "noop", Stream: true},
		{TaskID: "plain", Operator: "noop"},
	}}
	run, _ := env.SeedRun(t, dag, "r1", "")
	wls := claimAll(t, env, 2)
	prod, plain := taskClient(env, wls["produce"]), taskClient(env, wls["plain"])
	for id, c := range map[string]*execclient.Client{"produce": prod, "plain": plain} {
		if _, err := c.Run(ctx, wls[id].TI.ID, execclient.RunRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	items := func(vals ...int) []json.RawMessage {
		out := make([]json.RawMessage, len(vals))
		for i, v := range vals {
			out[i], _ = json.Marshal(map[string]int{"n": v})
		}
		return out
	}
	h, err := prod.StreamHead(ctx)
	if err != nil || h.NextIndex != 0 || h.Closed {
		t.Fatalf("head before any push = %+v, %v; want empty and open", h, err)
	}
	if h, err = prod.PushStream(ctx, 0, items(0, 1, 2), false); err != nil || h.Accepted != 3 || h.NextIndex != 3 {
		t.Fatalf("push 0..2 = %+v, %v; want 3 accepted", h, err)
	}
	// A retried request (same indexes) adds nothing; an overlap adds the new ones.
	if h, err = prod.PushStream(ctx, 1, items(1, 2, 3), false); err != nil || h.Skipped != 2 || h.Accepted != 1 || h.NextIndex != 4 {
		t.Fatalf("push 1..3 after 0..2 = %+v, %v; want 2 skipped, 1 accepted", h, err)
	}
	_, err = prod.PushStream(ctx, 9, items(9), false)
	status(t, err, http.StatusConflict, "the first item has sequence index 9 but the stream holds 4 items")
	big := json.RawMessage(`"` + strings.Repeat("a", core.MaxStreamPayloadBytes) + `"`)
	_, err = prod.PushStream(ctx, 4, []json.RawMessage{big}, false)
	status(t, err, http.StatusBadRequest, "more than the limit of 1048576 bytes per event")
	_, err = plain.PushStream(ctx, 0, items(0), false)
	status(t, err, http.StatusBadRequest, `task "plain" does not declare stream: true`)
	if h, err = prod.PushStream(ctx, 4, nil, true); err != nil || !h.Closed || h.NextIndex != 4 {
		t.Fatalf("close = %+v, %v; want closed with 4 items", h, err)
	}
	if h, err = prod.PushStream(ctx, 4, nil, true); err != nil || !h.Closed {
		t.Fatalf("close again = %+v, %v; want a no-op", h, err)
	}
	_, err = prod.PushStream(ctx, 4, items(4), false)
	status(t, err, http.StatusConflict, "is closed (its last item has sequence index 3); nothing was appended")

	evs, err := env.Store.StreamEventList(ctx, &store.StreamEventListParams{StreamID: core.TaskStreamID(run.ID, "produce"), After: -1, Limit: 100})
	if err != nil || len(evs) != 4 || !evs[3].IsLast || string(evs[3].Payload) != `{"n":3}` {
		t.Fatalf("envelopes = %+v, %v; want 0..3, the last is_last", evs, err)
	}
	if _, err := env.Store.StreamGet(ctx, core.TaskStreamID(run.ID, "plain")); err == nil {
		t.Errorf("a refused push from plain created a stream")
	}
}

func ptr(s string) *string { return &s }
