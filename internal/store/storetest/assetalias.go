package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// aliasConsumer is a DAG scheduled on alias "dyn" whose task "use" has it as
// an inlet.
func aliasConsumer(dagID string) core.DAG {
	dyn := []core.AssetRef{{Alias: "dyn"}}
	return core.DAG{DagID: dagID, AssetSchedule: dyn, Tasks: []core.Task{{TaskID: "use", Operator: "noop", Inlets: dyn}}}
}

// resolved returns the names of the assets alias resolves to.
func (f *fixture) resolved(alias string) []string {
	f.t.Helper()
	as, err := f.st.AssetAliasResolve(f.ctx, alias)
	must(f.t, err, "resolve "+alias)
	names := []string{}
	for _, a := range as {
		names = append(names, a.Name)
	}
	return names
}

// testAssetAliasAssociate: associating is idempotent and keeps the first
// and latest time; an alias resolves to its assets by name (SPEC AS-2).
func testAssetAliasAssociate(t *testing.T, f *fixture) {
	must(t, f.assetDag(producer("prod", orders, customers), f.now), "sync producer")
	if got := f.resolved("dyn"); len(got) != 0 {
		t.Errorf("dyn resolves to %v before any association, want nothing", got)
	}
	if got := f.resolved("never-declared"); len(got) != 0 {
		t.Errorf("an unknown alias resolves to %v, want nothing", got)
	}
	o, err := f.st.AssetGetByName(f.ctx, "orders")
	must(t, err, "get orders")
	c, err := f.st.AssetGetByName(f.ctx, "customers")
	must(t, err, "get customers")
	for _, id := range []int64{o.ID, c.ID, o.ID} {
		must(t, f.st.AssetAliasAssociate(f.ctx, &store.AssetAliasAssociateParams{Alias: "dyn", AssetID: id, Now: f.now}), "associate")
	}
	if got := f.resolved("dyn"); !cmp.Equal(got, []string{"customers", "orders"}) {
		t.Errorf("dyn resolves to %v, want [customers orders] (each once)", got)
	}
	// An alias no DAG declared yet is created by its first association.
	must(t, f.st.AssetAliasAssociate(f.ctx, &store.AssetAliasAssociateParams{Alias: "fresh", AssetID: o.ID, Now: f.now}), "associate fresh")
	if got := f.resolved("fresh"); !cmp.Equal(got, []string{"orders"}) {
		t.Errorf("fresh resolves to %v, want [orders]", got)
	}
	wantErr(t, f.st.AssetAliasAssociate(f.ctx, &store.AssetAliasAssociateParams{Alias: "dyn", AssetID: 999999, Now: f.now}),
		core.ErrNotFound, "associate an unknown asset")
	wantErr(t, f.st.AssetAliasAssociate(f.ctx, &store.AssetAliasAssociateParams{Alias: "", AssetID: o.ID, Now: f.now}),
		core.ErrInvalid, "associate an empty alias")
}

// testAssetAliasEventsWithSuccess: a running try's additions to an alias
// become events and associations in its success transaction; a failed try
// records nothing; a try that is not running cannot add (SPEC AS-2).
func testAssetAliasEventsWithSuccess(t *testing.T, f *fixture) {
	must(t, f.assetDag(producer("prod", orders, customers), f.now), "sync producer")
	must(t, f.assetDag(aliasConsumer("cons"), f.now), "sync alias consumer")
	o, err := f.st.AssetGetByName(f.ctx, "orders")
	must(t, err, "get orders")
	c, err := f.st.AssetGetByName(f.ctx, "customers")
	must(t, err, "get customers")
	a, b := newTI("load", core.TIQueued), newTI("other", core.TIQueued)
	_, err = f.st.DagRunCreate(f.ctx, &store.DagRunCreateParams{DagID: "prod", RunID: "r1", RunType: core.RunManual,
		State: core.RunRunning, Now: f.now, TaskInstances: []store.NewTaskInstance{a, b}})
	must(t, err, "create run")
	add := func(id string, asset int64, extra string) error {
		return f.st.AssetAliasEventAdd(f.ctx, &store.AssetAliasEventParams{TaskInstanceID: id, Alias: "dyn", AssetID: asset,
			Extra: json.RawMessage(extra), Now: f.now})
	}
	wantErr(t, add(a.ID, o.ID, ""), core.ErrConflict, "add while queued")
	_, err = f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w", Limit: 2, Now: f.now})
	must(t, err, "claim")
	for _, id := range []string{a.ID, b.ID} {
		_, err = f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: id, WorkerID: "w", Now: f.now})
		must(t, err, "start")
	}
	wantErr(t, add(a.ID, 999999, ""), core.ErrNotFound, "add an unknown asset")
	wantErr(t, add(a.ID, o.ID, `[1]`), core.ErrInvalid, "add with a non-object extra")
	wantErr(t, f.st.AssetAliasEventAdd(f.ctx, &store.AssetAliasEventParams{TaskInstanceID: a.ID, Alias: "undeclared",
		AssetID: o.ID, Now: f.now}), core.ErrNotFound, "add to an alias no DAG declares")
	must(t, add(a.ID, o.ID, `{"rows": 1}`), "add orders")
	must(t, add(a.ID, o.ID, `{"rows": 2}`), "add orders again (replaces the extra)")
	must(t, add(b.ID, c.ID, ""), "add customers from the try that fails")
	pending, err := f.st.AssetAliasEventList(f.ctx, a.ID)
	must(t, err, "list pending")
	if len(pending) != 1 || pending[0].AssetName != "orders" || string(pending[0].Extra) != `{"rows":2}` {
		t.Fatalf("pending = %+v, want orders once with the latest extra", pending)
	}
	if ready, _ := f.st.AssetQueueReady(f.ctx); len(ready) != 0 || len(f.resolved("dyn")) != 0 {
		t.Fatalf("ready = %v, dyn = %v before the try ends; want nothing recorded yet", ready, f.resolved("dyn"))
	}

	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: b.ID, State: core.TIFailed, Now: f.now}), "fail b")
	must(t, f.st.TaskInstanceFinish(f.ctx, &store.TaskInstanceFinishParams{ID: a.ID, State: core.TISuccess, Now: f.now}), "succeed a")
	evs, err := f.st.AssetEventList(f.ctx, &store.AssetEventListParams{SourceDagID: "prod"})
	must(t, err, "list events")
	if len(evs) != 1 || evs[0].Name != "orders" || evs[0].SourceTaskID != "load" || evs[0].SourceKind != core.AssetSourceTask ||
		string(evs[0].Extra) != `{"rows":2}` {
		t.Fatalf("events = %+v, want one task event of orders from load (the failed try records nothing)", evs)
	}
	if got := f.resolved("dyn"); !cmp.Equal(got, []string{"orders"}) {
		t.Errorf("dyn resolves to %v after the success, want [orders] (not customers: that try failed)", got)
	}
	for _, id := range []string{a.ID, b.ID} {
		if left, _ := f.st.AssetAliasEventList(f.ctx, id); len(left) != 0 {
			t.Errorf("try %s still has pending additions %+v after it finished", id, left)
		}
	}
	// The event was queued for the DAG scheduled on the alias.
	if ready, _ := f.st.AssetQueueReady(f.ctx); !cmp.Equal(ready, []string{"cons"}) {
		t.Errorf("ready = %v, want cons (scheduled on dyn)", ready)
	}
}

// testAssetAliasDeadTryRetried: a try that added to an alias and was then
// ended outside TaskInstanceFinish (a dead worker, or a clear) can still be
// retried; its additions are dropped with it and never become events.
func testAssetAliasDeadTryRetried(t *testing.T, f *fixture) {
	must(t, f.assetDag(producer("prod", orders, customers), f.now), "sync producer")
	o, err := f.st.AssetGetByName(f.ctx, "orders")
	must(t, err, "get orders")
	a := newTI("load", core.TIQueued)
	a.MaxTries = 2
	_, err = f.st.DagRunCreate(f.ctx, &store.DagRunCreateParams{DagID: "prod", RunID: "r1", RunType: core.RunManual,
		State: core.RunRunning, Now: f.now, TaskInstances: []store.NewTaskInstance{a}})
	must(t, err, "create run")
	_, err = f.st.TaskInstanceClaim(f.ctx, &store.TaskInstanceClaimParams{WorkerID: "w", Limit: 1, Now: f.now})
	must(t, err, "claim")
	_, err = f.st.TaskInstanceStart(f.ctx, &store.TaskInstanceStartParams{ID: a.ID, WorkerID: "w", Now: f.now})
	must(t, err, "start")
	must(t, f.st.AssetAliasEventAdd(f.ctx, &store.AssetAliasEventParams{TaskInstanceID: a.ID, Alias: "dyn",
		AssetID: o.ID, Now: f.now}), "add orders")
	// The scheduler fails the dead worker's try and starts the next one.
	_, err = f.st.TaskInstanceSetState(f.ctx, &store.TaskInstanceSetStateParams{IDs: []string{a.ID},
		From: []core.TIState{core.TIRunning}, To: core.TIUpForRetry, Now: f.now})
	must(t, err, "fail the dead try")
	next := uuid.NewString()
	must(t, f.st.TaskInstanceNewTry(f.ctx, &store.TaskInstanceNewTryParams{ID: a.ID, NewID: next,
		To: core.TIScheduled, Now: f.now}), "start the retry")
	if left, _ := f.st.AssetAliasEventList(f.ctx, a.ID); len(left) != 0 {
		t.Errorf("the dead try still has pending additions %+v", left)
	}
	if evs, _ := f.st.AssetEventList(f.ctx, &store.AssetEventListParams{SourceDagID: "prod"}); len(evs) != 0 {
		t.Errorf("events = %+v, want none from a try that did not succeed", evs)
	}
}

// testAssetAliasSchedule: a DAG scheduled on an alias is queued by events
// of the assets the alias resolves to at event time, and its run consumes
// them; with an asset scheduled as well it waits for both.
func testAssetAliasSchedule(t *testing.T, f *fixture) {
	must(t, f.assetDag(producer("prod", orders, customers), f.now), "sync producer")
	mixed := aliasConsumer("mixed")
	mixed.Assets = []core.Asset{customers}
	mixed.AssetSchedule = append(mixed.AssetSchedule, core.AssetRef{Name: "customers"})
	must(t, f.assetDag(aliasConsumer("cons"), f.now), "sync alias consumer")
	must(t, f.assetDag(mixed, f.now), "sync mixed consumer")
	o, err := f.st.AssetGetByName(f.ctx, "orders")
	must(t, err, "get orders")
	event := func(name string, aliases ...string) {
		t.Helper()
		_, err := f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetName: name, SourceKind: core.AssetSourceAPI,
			Aliases: aliases, Now: f.now})
		must(t, err, "event of "+name)
	}
	event("orders") // dyn resolves to nothing yet: no consumer is queued
	if ready, _ := f.st.AssetQueueReady(f.ctx); len(ready) != 0 {
		t.Fatalf("ready = %v before dyn resolves to orders, want none", ready)
	}
	event("orders", "dyn") // associates dyn with orders, then queues
	if ready, _ := f.st.AssetQueueReady(f.ctx); !cmp.Equal(ready, []string{"cons"}) {
		t.Fatalf("ready = %v, want cons (mixed also waits for customers)", ready)
	}
	event("customers")
	if ready, _ := f.st.AssetQueueReady(f.ctx); !cmp.Equal(ready, []string{"cons", "mixed"}) {
		t.Fatalf("ready = %v, want cons and mixed", ready)
	}
	// Later events of orders reach dyn's consumers without naming the alias.
	run := f.run("cons", "asset_triggered__1")
	evs, err := f.st.AssetQueueConsume(f.ctx, "cons", run.ID)
	must(t, err, "consume cons")
	if len(evs) != 1 || evs[0].AssetID != o.ID {
		t.Errorf("cons consumed %+v, want the one orders event queued after dyn resolved", evs)
	}
	_, err = f.st.AssetQueueConsume(f.ctx, "cons", run.ID)
	wantErr(t, err, core.ErrConflict, "consume cons again")
	event("orders")
	if ready, _ := f.st.AssetQueueReady(f.ctx); !cmp.Equal(ready, []string{"cons", "mixed"}) {
		t.Errorf("ready = %v after a plain orders event, want cons queued again through dyn", ready)
	}
	// A DAG no longer scheduled on the alias drops its queued events.
	plain := aliasConsumer("cons")
	plain.AssetSchedule = nil
	plain.Schedule = "@daily"
	must(t, f.assetDag(plain, f.now), "unschedule cons")
	if q, _ := f.st.AssetQueueList(f.ctx, "cons"); len(q) != 0 {
		t.Errorf("cons queue = %+v after it stopped being scheduled on dyn, want empty", q)
	}
}

// testAssetAliasListGet: aliases are listed by name with the assets they
// resolve to and the first and latest association times; an alias declared
// but never added to resolves to nothing; an unknown alias is not found.
func testAssetAliasListGet(t *testing.T, f *fixture) {
	must(t, f.assetDag(producer("prod", orders, customers), f.now), "sync producer")
	must(t, f.assetDag(aliasConsumer("cons"), f.now), "sync alias consumer")
	all, err := f.st.AssetAliasList(f.ctx, &store.AssetAliasListParams{})
	must(t, err, "list aliases")
	if len(all) != 1 || all[0].Name != "dyn" || all[0].Assets == nil || len(all[0].Assets) != 0 || !all[0].CreatedAt.Equal(f.now) {
		t.Fatalf("aliases before any addition = %+v, want dyn resolving to nothing (an empty list)", all)
	}
	o, err := f.st.AssetGetByName(f.ctx, "orders")
	must(t, err, "get orders")
	c, err := f.st.AssetGetByName(f.ctx, "customers")
	must(t, err, "get customers")
	associate := func(alias string, asset int64, at time.Duration) {
		t.Helper()
		must(t, f.st.AssetAliasAssociate(f.ctx, &store.AssetAliasAssociateParams{Alias: alias, AssetID: asset, Now: f.at(at)}),
			"associate "+alias)
	}
	associate("dyn", o.ID, time.Minute)
	associate("dyn", c.ID, 2*time.Minute)
	associate("dyn", o.ID, 3*time.Minute)
	associate("another", c.ID, 4*time.Minute)

	got, err := f.st.AssetAliasGet(f.ctx, "dyn")
	must(t, err, "get dyn")
	want := []store.AliasedAsset{
		{ID: c.ID, Name: "customers", URI: customers.URI, Active: true, FirstAssociatedAt: f.at(2 * time.Minute), LastAssociatedAt: f.at(2 * time.Minute)},
		{ID: o.ID, Name: "orders", URI: orders.URI, Active: true, FirstAssociatedAt: f.at(time.Minute), LastAssociatedAt: f.at(3 * time.Minute)},
	}
	if diff := cmp.Diff(want, got.Assets); diff != "" || got.Name != "dyn" {
		t.Errorf("dyn = %+v; assets (-want +got):\n%s", got, diff)
	}
	all, err = f.st.AssetAliasList(f.ctx, &store.AssetAliasListParams{})
	must(t, err, "list aliases")
	var names []string
	for _, a := range all {
		names = append(names, a.Name)
	}
	if !cmp.Equal(names, []string{"another", "dyn"}) || len(all[0].Assets) != 1 || all[0].Assets[0].Name != "customers" ||
		len(all[1].Assets) != 2 {
		t.Errorf("aliases = %+v, want another (customers) and dyn (customers, orders), by name", all)
	}
	_, err = f.st.AssetAliasGet(f.ctx, "never-declared")
	wantErr(t, err, core.ErrNotFound, "get an unknown alias")
}
