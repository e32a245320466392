package storetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// assetDag records a DAG and its assets in one transaction, as the DAG
// processor does, and returns the sync error.
func (f *fixture) assetDag(spec core.DAG, at time.Time) error {
	return f.st.WithTx(f.ctx, func(tx store.Store) error {
		if _, _, err := tx.DagSync(f.ctx, &store.DagSyncParams{Spec: spec, Hash: fmt.Sprintf("%v", spec), Now: at}); err != nil {
			return err
		}
		return tx.AssetSync(f.ctx, &store.AssetSyncParams{Spec: &spec, Now: at})
	})
}

// producer is a DAG whose task "load" updates the given assets.
func producer(dagID string, assets ...core.Asset) core.DAG {
	var outlets []core.AssetRef
	for _, a := range assets {
		outlets = append(outlets, core.AssetRef{Name: a.Name})
	}
	return core.DAG{DagID: dagID, Assets: assets,
		Tasks: []core.Task{{TaskID: "load", Operator: "noop", Outlets: append(outlets, core.AssetRef{Alias: "dyn"})}}}
}

// consumer is a DAG scheduled on the given assets, reading them in "use".
func consumer(dagID string, assets ...core.Asset) core.DAG {
	var refs []core.AssetRef
	for _, a := range assets {
		refs = append(refs, core.AssetRef{URI: a.URI})
	}
	return core.DAG{DagID: dagID, Assets: assets, AssetSchedule: refs,
		Tasks: []core.Task{{TaskID: "use", Operator: "noop", Inlets: refs}}}
}

var (
	orders    = core.Asset{Name: "orders", URI: "s3://lake/orders", Extra: map[string]any{"owner": "sales"}}
	customers = core.Asset{Name: "customers", URI: "s3://lake/customers", Group: "crm"}
)

// testAssetSync covers definitions, users, conflicts and deactivation (AS-5).
func testAssetSync(t *testing.T, f *fixture) {
	must(t, f.assetDag(producer("prod", orders, customers), f.now), "sync producer")
	must(t, f.assetDag(consumer("cons", orders), f.now), "sync consumer")
	o, err := f.st.AssetGetByName(f.ctx, "orders")
	must(t, err, "get by name")
	got, err := f.st.AssetGet(f.ctx, o.ID)
	must(t, err, "get")
	want := &core.AssetModel{ID: o.ID, Name: "orders", URI: "s3://lake/orders", Group: core.DefaultAssetGroup,
		Extra: map[string]any{"owner": "sales"}, Active: true, CreatedAt: f.now, UpdatedAt: f.now,
		ScheduledDags: []core.DagRef{{DagID: "cons", CreatedAt: f.now, UpdatedAt: f.now}},
		Producing:     []core.TaskRef{{DagID: "prod", TaskID: "load", CreatedAt: f.now, UpdatedAt: f.now}},
		Consuming:     []core.TaskRef{{DagID: "cons", TaskID: "use", CreatedAt: f.now, UpdatedAt: f.now}},
		Aliases:       []core.AliasRef{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("asset (-want +got):\n%s", diff)
	}
	// A page of assets carries the same users, read for the whole page;
	// an alias the asset was added to, and its newest event, show.
	must(t, f.st.AssetAliasAssociate(f.ctx, &store.AssetAliasAssociateParams{Alias: "dyn", AssetID: o.ID, Now: f.now}), "associate")
	ev, err := f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: "orders", SourceKind: core.AssetSourceAPI, Now: f.at(time.Minute)})
	must(t, err, "event")
	list, err := f.st.AssetList(f.ctx, &store.AssetListParams{})
	must(t, err, "list")
	if len(list) != 2 || list[1].Name != "orders" {
		t.Fatalf("assets = %+v, want customers and orders", list)
	}
	want.Aliases = []core.AliasRef{{ID: list[1].Aliases[0].ID, Name: "dyn", Group: core.DefaultAssetGroup}}
	want.LastEvent = &core.LastAssetEvent{ID: ev.ID, Timestamp: f.at(time.Minute)}
	if diff := cmp.Diff(want, &list[1]); diff != "" {
		t.Errorf("listed asset (-want +got):\n%s", diff)
	}
	if cs := list[0]; cs.ScheduledDags == nil || len(cs.Consuming) != 0 || len(cs.Producing) != 1 || len(cs.Aliases) != 0 || cs.LastEvent != nil {
		t.Errorf("customers = %+v, want its producer alone, empty lists not null", cs)
	}
	c, err := f.st.AssetGetByURI(f.ctx, "s3://lake/customers")
	must(t, err, "get by uri")
	if c.Group != "crm" || !c.Active {
		t.Errorf("customers = %+v, want group crm, active", c)
	}
	_, err = f.st.AssetGetByName(f.ctx, "nope")
	wantErr(t, err, core.ErrNotFound, "get unknown asset")

	// Another DAG may not redefine an asset's uri, nor take its uri.
	clash := core.Asset{Name: "orders", URI: "s3://other/orders"}
	wantErr(t, f.assetDag(producer("rogue", clash), f.now), core.ErrConflict, "redefine orders' uri")
	wantErr(t, f.assetDag(producer("rogue", core.Asset{Name: "orders2", URI: orders.URI}), f.now),
		core.ErrConflict, "take orders' uri")
	if _, err := f.st.DagGet(f.ctx, "rogue"); err == nil {
		t.Error("a refused asset sync left its DAG behind; want the whole sync rolled back")
	}

	// The producer drops customers: nobody defines it any more. Its use of
	// orders keeps when it was first recorded.
	later := f.at(time.Hour)
	must(t, f.assetDag(producer("prod", orders), later), "re-sync producer")
	if got, err = f.st.AssetGet(f.ctx, o.ID); err != nil || len(got.Producing) != 1 ||
		!got.Producing[0].CreatedAt.Equal(f.now) || !got.Producing[0].UpdatedAt.Equal(later) || !got.UpdatedAt.Equal(f.now) {
		t.Errorf("orders after the re-sync: %+v, %v; want its producer recorded at %v, written at %v, and itself unchanged since %v",
			got, err, f.now, later, f.now)
	}
	c, err = f.st.AssetGetByName(f.ctx, "customers")
	must(t, err, "get customers")
	if c.Active || c.InactiveSince == nil || !c.InactiveSince.Equal(later) {
		t.Errorf("customers active=%v since=%v, want inactive since %v", c.Active, c.InactiveSince, later)
	}
	inactive := false
	list, err = f.st.AssetList(f.ctx, &store.AssetListParams{Active: &inactive})
	must(t, err, "list inactive")
	if len(list) != 1 || list[0].Name != "customers" {
		t.Errorf("inactive assets = %+v, want customers", list)
	}
	list, err = f.st.AssetList(f.ctx, &store.AssetListParams{URIPattern: "s3://lake/%", Page: store.Page{Limit: 1}})
	must(t, err, "list by uri pattern")
	if len(list) != 1 || list[0].Name != "customers" {
		t.Errorf("first asset by uri pattern = %+v, want customers (by name)", list)
	}

	// Both DAGs go away: orders is orphaned too; a DAG defining it again revives it.
	must(t, f.st.DagDeactivateMissing(f.ctx, &store.DagDeactivateParams{Keep: []string{"other"}}), "deactivate dags")
	n, err := f.st.AssetDeactivateOrphans(f.ctx, f.at(2*time.Hour))
	must(t, err, "deactivate orphans")
	if n != 1 {
		t.Errorf("deactivated %d assets, want 1 (orders)", n)
	}
	must(t, f.assetDag(consumer("cons", orders), f.at(3*time.Hour)), "revive consumer")
	o, err = f.st.AssetGetByName(f.ctx, "orders")
	must(t, err, "get orders")
	if !o.Active || o.InactiveSince != nil {
		t.Errorf("orders after a DAG defines it again: active=%v since=%v, want active", o.Active, o.InactiveSince)
	}
}

// testAssetEventsQueue covers events, the consumer queue and consumption.
func testAssetEventsQueue(t *testing.T, f *fixture) {
	must(t, f.assetDag(producer("prod", orders, customers), f.now), "sync producer")
	must(t, f.assetDag(consumer("cons", orders, customers), f.now), "sync consumer")
	must(t, f.assetDag(consumer("just_orders", orders), f.now), "sync consumer 2")
	o, _ := f.st.AssetGetByName(f.ctx, "orders")

	ev1, err := f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: "orders", SourceKind: core.AssetSourceAPI,
		Extra: json.RawMessage(`{"rows": 3}`), Now: f.now})
	must(t, err, "insert event")
	if ev1.AssetID != o.ID || ev1.Name != "orders" || ev1.URI != orders.URI || string(ev1.Extra) != `{"rows":3}` ||
		ev1.SourceMapIndex != core.NoMapIndex || !ev1.Timestamp.Equal(f.now) {
		t.Errorf("event = %+v", ev1)
	}
	ready, err := f.st.AssetQueueReady(f.ctx)
	must(t, err, "ready")
	if diff := cmp.Diff([]string{"just_orders"}, ready); diff != "" {
		t.Errorf("ready after orders only (-want +got):\n%s", diff)
	}
	_, err = f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: "customers", SourceKind: core.AssetSourceAPI, Now: f.now})
	must(t, err, "insert customers event")
	ev3, err := f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetID: o.ID, SourceKind: core.AssetSourceAPI, Now: f.at(time.Minute)})
	must(t, err, "insert second orders event")
	// Airflow's event filters: the asset's name, the time, the map index.
	at := func(d time.Duration) *time.Time { x := f.at(d); return &x }
	mapped, unmapped := 3, core.NoMapIndex
	for _, tc := range []struct {
		what string
		p    store.AssetEventListParams
		want int
	}{
		{"name containing ORD", store.AssetEventListParams{AssetNameSearch: "ORD"}, 2},
		{"from a minute on", store.AssetEventListParams{Timestamp: store.TimeRange{GTE: at(time.Minute)}}, 1},
		{"up to now", store.AssetEventListParams{Timestamp: store.TimeRange{LTE: at(0)}}, 2},
		{"unmapped", store.AssetEventListParams{SourceMapIndex: &unmapped}, 3},
		{"map index 3", store.AssetEventListParams{SourceMapIndex: &mapped}, 0},
	} {
		evs, err := f.st.AssetEventList(f.ctx, &tc.p)
		must(t, err, "list events "+tc.what)
		n, err := f.st.AssetEventCount(f.ctx, &tc.p)
		must(t, err, "count events "+tc.what)
		if len(evs) != tc.want || n != tc.want {
			t.Errorf("events %s: %d listed, %d counted, want %d", tc.what, len(evs), n, tc.want)
		}
	}
	q, err := f.st.AssetQueueList(f.ctx, "cons")
	must(t, err, "queue list")
	if len(q) != 2 || q[1].AssetName != "orders" || q[1].FirstEventID != ev1.ID || q[1].LastEventID != ev3.ID {
		t.Errorf("queue of cons = %+v, want customers, then orders events %d..%d", q, ev1.ID, ev3.ID)
	}
	ready, _ = f.st.AssetQueueReady(f.ctx)
	if diff := cmp.Diff([]string{"cons", "just_orders"}, ready); diff != "" {
		t.Errorf("ready after both (-want +got):\n%s", diff)
	}
	must(t, f.st.DagSetPaused(f.ctx, "just_orders", true), "pause")
	ready, _ = f.st.AssetQueueReady(f.ctx)
	if diff := cmp.Diff([]string{"cons"}, ready); diff != "" {
		t.Errorf("ready with just_orders paused (-want +got):\n%s", diff)
	}

	run := f.run("cons", "asset_triggered__1")
	consumed, err := f.st.AssetQueueConsume(f.ctx, "cons", run.ID)
	must(t, err, "consume")
	if len(consumed) != 3 {
		t.Fatalf("consumed %d events, want all 3 queued for cons", len(consumed))
	}
	again, err := f.st.AssetEventsOfRun(f.ctx, run.ID)
	must(t, err, "events of run")
	if diff := cmp.Diff(consumed, again); diff != "" {
		t.Errorf("events of run (-consume +stored):\n%s", diff)
	}
	listed, err := f.st.AssetEventList(f.ctx, &store.AssetEventListParams{ConsumedByRunID: run.ID, Page: store.Page{Limit: 2, Offset: 1}})
	must(t, err, "list events of run")
	if n, _ := f.st.AssetEventCount(f.ctx, &store.AssetEventListParams{ConsumedByRunID: run.ID}); n != 3 || len(listed) != 2 ||
		listed[0].ID != consumed[1].ID || listed[1].ID != consumed[2].ID {
		t.Errorf("listed events of run (limit 2 offset 1) = %+v, count %d; want the last two of %+v, count 3", listed, n, consumed)
	}
	// Each event names the run it created, read by event.
	made, err := f.st.AssetEventRuns(f.ctx, []int64{ev1.ID, ev3.ID, ev3.ID + 1000})
	must(t, err, "runs of events")
	if len(made) != 2 || made[0].EventID != ev1.ID || made[1].EventID != ev3.ID || made[0].Run.RunID != run.RunID ||
		made[1].Run.DagID != "cons" || made[0].Run.State != run.State {
		t.Errorf("runs of events %d and %d = %+v, want run %s of cons for each", ev1.ID, ev3.ID, made, run.RunID)
	}
	if made, err := f.st.AssetEventRuns(f.ctx, nil); err != nil || len(made) != 0 {
		t.Errorf("runs of no event = %v, %v", made, err)
	}
	_, err = f.st.AssetQueueConsume(f.ctx, "cons", run.ID)
	wantErr(t, err, core.ErrConflict, "consume twice")
	if q, _ := f.st.AssetQueueList(f.ctx, "just_orders"); len(q) != 1 {
		t.Errorf("just_orders lost its queue when cons consumed: %+v", q)
	}

	// Bad input changes nothing.
	_, err = f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: "orders", SourceKind: core.AssetSourceAPI,
		Extra: json.RawMessage(`[1]`), Now: f.now})
	wantErr(t, err, core.ErrInvalid, "extra not an object")
	_, err = f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: "nope", SourceKind: core.AssetSourceAPI, Now: f.now})
	wantErr(t, err, core.ErrNotFound, "unknown asset")
	_, err = f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: "orders", SourceKind: "cron", Now: f.now})
	wantErr(t, err, core.ErrInvalid, "unknown source kind")
	all, err := f.st.AssetEventList(f.ctx, &store.AssetEventListParams{AssetID: o.ID})
	must(t, err, "list events")
	if len(all) != 2 {
		t.Errorf("%d orders events after refused inserts, want 2", len(all))
	}
}

// testAssetOutletEventsWithSuccess: a try's outlet events commit with its
// success, or not at all.
func testAssetOutletEventsWithSuccess(t *testing.T, f *fixture) {
	must(t, f.assetDag(producer("prod", orders), f.now), "sync producer")
	must(t, f.assetDag(consumer("cons", orders), f.now), "sync consumer")
	a, b := newTI("load", core.TIQueued), newTI("other", core.TIQueued)
	run, err := f.st.DagRunCreate(f.ctx, &store.DagRunCreateParams{DagID: "prod", RunID: "r1", RunType: core.RunManual,
		State: core.RunRunning, DagVersionID: 0, Now: f.now, TaskInstances: []store.NewTaskInstance{a, b}})
	must(t, err, "create run")
	_, err = f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w", Limit: 2, Now: f.now})
	must(t, err, "claim")
	for _, id := range []string{a.ID, b.ID} {
		_, err = f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: id, WorkerID: "w", Now: f.now})
		must(t, err, "start")
	}
	outlet := func(name, task string) []store.AssetEventParams {
		return []store.AssetEventParams{{AssetName: name, SourceKind: core.AssetSourceTask, SourceDagID: "prod",
			SourceRunID: run.RunID, SourceTaskID: task, SourceMapIndex: core.NoMapIndex, SourceTryNumber: 1, Now: f.now}}
	}
	// An event that cannot be recorded leaves the try running.
	err = f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: b.ID, State: core.TISuccess, Now: f.now,
		OutletEvents: outlet("gone", "other")})
	wantErr(t, err, core.ErrNotFound, "finish with an unknown outlet")
	if got := f.get(b.ID); got.State != core.TIRunning {
		t.Errorf("try after a failed outlet event is %s, want still running", got.State)
	}
	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: a.ID, State: core.TISuccess, Now: f.now,
		OutletEvents: outlet("orders", "load")}), "finish with outlet")
	// A refused finish records no events.
	wantErr(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: a.ID, State: core.TISuccess, Now: f.now,
		OutletEvents: outlet("orders", "load")}), core.ErrConflict, "finish twice")
	evs, err := f.st.AssetEventList(f.ctx, &store.AssetEventListParams{SourceDagID: "prod", SourceRunID: "r1", SourceTaskID: "load"})
	must(t, err, "list events")
	if len(evs) != 1 || evs[0].SourceKind != core.AssetSourceTask || evs[0].SourceTryNumber != 1 || evs[0].Name != "orders" {
		t.Fatalf("events of prod/r1/load = %+v, want one task event for orders", evs)
	}
	if ready, _ := f.st.AssetQueueReady(f.ctx); !cmp.Equal(ready, []string{"cons"}) {
		t.Errorf("ready = %v, want the success to queue cons", ready)
	}
}

// testAssetQueueFindClear: queued entries are found and cleared by DAG,
// by asset or both, and by when they were queued; a clear takes the
// per-partition queue's events of the same DAG and asset too, and changes
// nothing elsewhere.
func testAssetQueueFindClear(t *testing.T, f *fixture) {
	must(t, f.assetDag(producer("prod", orders, customers), f.now), "sync producer")
	must(t, f.assetDag(consumer("cons", orders, customers), f.now), "sync consumer")
	must(t, f.assetDag(consumer("just_orders", orders), f.now), "sync consumer 2")
	perEvent := consumer("per_event", customers)
	perEvent.AssetRuns = core.AssetRunsPerEvent
	must(t, f.assetDag(perEvent, f.now), "sync a per-event consumer")
	o, _ := f.st.AssetGetByName(f.ctx, "orders")
	c, _ := f.st.AssetGetByName(f.ctx, "customers")
	_, err := f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetID: o.ID, SourceKind: core.AssetSourceAPI, Now: f.now})
	must(t, err, "orders event")
	_, err = f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetID: c.ID, SourceKind: core.AssetSourceAPI, Now: f.at(time.Minute)})
	must(t, err, "customers event")
	find := func(p store.AssetQueueParams) string {
		t.Helper()
		q, err := f.st.AssetQueueFind(f.ctx, &p)
		must(t, err, "find queued")
		var got []string
		for _, e := range q {
			got = append(got, e.DagID+"/"+e.AssetName)
		}
		return strings.Join(got, " ")
	}
	for _, tc := range []struct {
		p    store.AssetQueueParams
		want string
	}{
		{store.AssetQueueParams{DagID: "cons"}, "cons/customers cons/orders"},
		{store.AssetQueueParams{AssetID: o.ID}, "cons/orders just_orders/orders"},
		{store.AssetQueueParams{DagID: "cons", AssetID: c.ID}, "cons/customers"},
		{store.AssetQueueParams{AssetID: c.ID}, "cons/customers per_event/customers"},
		{store.AssetQueueParams{DagID: "cons", Before: f.at(time.Minute)}, "cons/orders"},
		{store.AssetQueueParams{DagID: "prod"}, ""},
	} {
		if got := find(tc.p); got != tc.want {
			t.Errorf("find %+v = %q, want %q", tc.p, got, tc.want)
		}
	}
	_, err = f.st.AssetQueueFind(f.ctx, &store.AssetQueueParams{})
	wantErr(t, err, core.ErrInvalid, "find naming neither DAG nor asset")
	_, err = f.st.AssetQueueClear(f.ctx, &store.AssetQueueParams{})
	wantErr(t, err, core.ErrInvalid, "clear naming neither DAG nor asset")

	n, err := f.st.AssetQueueClear(f.ctx, &store.AssetQueueParams{AssetID: o.ID})
	must(t, err, "clear orders")
	if n != 2 || find(store.AssetQueueParams{DagID: "cons"}) != "cons/customers" || find(store.AssetQueueParams{DagID: "just_orders"}) != "" {
		t.Errorf("after clearing orders (%d): cons %q, just_orders %q; want customers left for cons alone", n,
			find(store.AssetQueueParams{DagID: "cons"}), find(store.AssetQueueParams{DagID: "just_orders"}))
	}
	if ready, _ := f.st.AssetQueueReady(f.ctx); len(ready) != 0 {
		t.Errorf("ready after the clear = %v, want none (cons lacks orders)", ready)
	}
	if n, err := f.st.AssetQueueClear(f.ctx, &store.AssetQueueParams{DagID: "cons", Before: f.now}); err != nil || n != 0 {
		t.Errorf("clear of nothing queued before: %d, %v", n, err)
	}
	// A per-event DAG's queued event goes, and with it the run it waited for.
	if groups, _ := f.st.AssetPartitionReady(f.ctx, 100); len(groups) != 1 || groups[0].DagID != "per_event" {
		t.Fatalf("per-event groups ready = %+v, want per_event's", groups)
	}
	if n, err := f.st.AssetQueueClear(f.ctx, &store.AssetQueueParams{DagID: "per_event"}); err != nil || n != 1 {
		t.Errorf("clear per_event: %d, %v; want its one event", n, err)
	}
	if groups, _ := f.st.AssetPartitionReady(f.ctx, 100); len(groups) != 0 {
		t.Errorf("per-event groups ready after the clear = %+v, want none", groups)
	}
}
