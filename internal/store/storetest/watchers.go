package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// watched returns asset a with one watcher name on a directory trigger of
// path (the same kwargs, written in another key order, share a trigger).
func watched(a core.Asset, name, kwargs string) core.Asset {
	a.Watchers = []core.AssetWatcher{{Name: name, Trigger: core.TriggerSpec{Type: "directory", Kwargs: json.RawMessage(kwargs)}}}
	return a
}

// watchers lists the running watchers of the store.
func (f *fixture) watchers() []core.Watcher {
	f.t.Helper()
	ws, err := f.st.WatcherList(f.ctx, &store.WatcherListParams{Running: true})
	must(f.t, err, "list watchers")
	return ws
}

// testWatcherSync covers declaring, sharing, changing and removing watchers (W-1, W-4).
func testWatcherSync(t *testing.T, f *fixture) {
	o := watched(orders, "landing", `{"path": "/in", "glob": "*.csv"}`)
	c := watched(customers, "landing", `{"glob":"*.csv","path":"/in"}`)
	must(t, f.assetDag(producer("prod", o, c), f.now), "sync watchers")
	ws := f.watchers()
	if len(ws) != 2 || ws[0].AssetName != "customers" || ws[1].AssetName != "orders" || ws[0].TriggerID == 0 ||
		ws[0].TriggerID != ws[1].TriggerID || ws[0].DagID != "prod" || ws[0].Cursor != nil {
		t.Fatalf("watchers = %+v, want customers and orders sharing one trigger, declared by prod, no cursor", ws)
	}
	shared := ws[0].TriggerID
	tr, err := f.st.TriggerGet(f.ctx, shared)
	must(t, err, "get shared trigger")
	if tr.Type != "directory" || string(tr.Kwargs) != `{"glob":"*.csv","path":"/in"}` {
		t.Errorf("shared trigger = %+v, want directory with canonical kwargs", tr)
	}

	// Another active DAG may declare the same watcher alike, not otherwise.
	must(t, f.assetDag(producer("alike", o), f.now), "declare the same watcher alike")
	other := watched(orders, "landing", `{"path":"/elsewhere"}`)
	wantErr(t, f.assetDag(producer("clash", other), f.now), core.ErrConflict, "declare it with another trigger")
	if ws := f.watchers(); len(ws) != 2 || ws[1].DagID != "prod" || ws[1].TriggerID != shared {
		t.Fatalf("after a refused clash watchers = %+v, want unchanged", ws)
	}

	// A changed trigger moves the watcher to a new row; the unused one goes.
	o2 := watched(orders, "landing", `{"path":"/in","glob":"*.json"}`)
	must(t, f.assetDag(producer("prod", o2, c), f.at(time.Second)), "change one watcher")
	ws = f.watchers()
	if ws[0].TriggerID != shared || ws[1].TriggerID == shared || ws[1].TriggerID == 0 {
		t.Fatalf("after a change watchers = %+v, want orders on a new trigger, customers on %d", ws, shared)
	}
	// Removing the watchers deletes them and their triggers.
	must(t, f.assetDag(producer("prod", orders, customers), f.at(2*time.Second)), "remove the watchers")
	if ws := f.watchers(); len(ws) != 0 {
		t.Fatalf("after removal watchers = %+v, want none", ws)
	}
	if n, err := f.st.TriggerCount(f.ctx, &store.TriggerListParams{}); err != nil || n != 0 {
		t.Errorf("triggers after removing every watcher = %d, %v; want 0", n, err)
	}
}

// testWatcherStopsWithDag covers an inactive DAG stopping its watchers and
// their return (W-1, W-5).
func testWatcherStopsWithDag(t *testing.T, f *fixture) {
	o := watched(orders, "landing", `{"path":"/in"}`)
	must(t, f.assetDag(producer("prod", o), f.now), "sync watcher")
	must(t, f.st.DagDeactivateMissing(f.ctx, &store.DagDeactivateParams{}), "deactivate")
	if ws := f.watchers(); len(ws) != 0 {
		t.Fatalf("running watchers of an inactive DAG = %+v, want none", ws)
	}
	if n, err := f.st.TriggerDeleteUnused(f.ctx); err != nil || n != 1 {
		t.Fatalf("delete unused triggers = %d, %v; want the watcher's one", n, err)
	}
	// The DAG comes back unchanged: the next attach gives it a trigger.
	_, _, err := f.st.DagSync(f.ctx, &store.DagSyncParams{Spec: producer("prod", o), Hash: "again", Now: f.now})
	must(t, err, "reactivate")
	if n, err := f.st.WatcherAttachTriggers(f.ctx, f.now); err != nil || n != 1 {
		t.Fatalf("attach = %d, %v; want 1", n, err)
	}
	if ws := f.watchers(); len(ws) != 1 || ws[0].TriggerID == 0 {
		t.Fatalf("watchers after attach = %+v, want one with a trigger", ws)
	}
	if n, err := f.st.WatcherAttachTriggers(f.ctx, f.now); err != nil || n != 0 {
		t.Errorf("second attach = %d, %v; want 0", n, err)
	}
}

// testWatcherCommit covers the atomic commit of events and cursor (W-2).
func testWatcherCommit(t *testing.T, f *fixture) {
	o := watched(orders, "landing", `{"path":"/in"}`)
	must(t, f.assetDag(producer("prod", o), f.now), "sync producer")
	must(t, f.assetDag(consumer("cons", orders), f.now), "sync consumer")
	ws := f.watchers()
	w := ws[0]
	claimed, err := f.st.TriggerClaim(f.ctx, &store.TriggerClaimParams{TriggererID: "t1", AliveSince: f.now, Limit: 10})
	if err != nil || len(claimed) != 1 || claimed[0].ID != w.TriggerID {
		t.Fatalf("claim = %+v, %v; want the watcher's trigger", claimed, err)
	}
	part := "2026-03-04"
	commit := func(triggerer string, version int64, cursor string, n int) (*store.WatcherCommitResult, error) {
		p := &store.WatcherCommitParams{TriggerID: w.TriggerID, TriggererID: triggerer, Now: f.at(time.Minute),
			Cursors: []store.WatcherCursor{{AssetID: w.AssetID, Watcher: "landing", Value: json.RawMessage(cursor), Version: version}}}
		for i := range n {
			p.Events = append(p.Events, store.WatcherEvent{AssetID: w.AssetID, Watcher: "landing",
				Extra: json.RawMessage(`{"key":"f` + string(rune('0'+i)) + `"}`), PartitionKey: &part})
		}
		return f.st.WatcherCommit(f.ctx, p)
	}
	res, err := commit("t1", 0, `{"after":"f1"}`, 2)
	must(t, err, "commit two events and a cursor")
	if len(res.EventIDs) != 2 || len(res.Versions) != 1 || res.Versions[0] == 0 {
		t.Fatalf("commit result = %+v, want 2 events and a cursor version", res)
	}
	evs, err := f.st.AssetEventList(f.ctx, &store.AssetEventListParams{AssetID: w.AssetID})
	must(t, err, "list events")
	if len(evs) != 2 || evs[0].SourceKind != core.AssetSourceWatcher || evs[0].SourceWatcher != "landing" ||
		evs[0].PartitionKey == nil || *evs[0].PartitionKey != part || string(evs[0].Extra) != `{"key":"f0"}` {
		t.Fatalf("events = %+v, want two watcher events with partition and extra", evs)
	}
	if q, err := f.st.AssetQueueList(f.ctx, "cons"); err != nil || len(q) != 1 || q[0].LastEventID != res.EventIDs[1] {
		t.Fatalf("consumer queue = %+v, %v; want the events queued", q, err)
	}
	got := f.watchers()[0]
	if string(got.Cursor) != `{"after":"f1"}` || got.CursorVersion != res.Versions[0] || got.Events != 2 ||
		got.LastEventID != res.EventIDs[1] || !sameTime(got.LastEventAt, ptr(f.at(time.Minute))) || got.TriggererID != "t1" {
		t.Fatalf("watcher after commit = %+v, want cursor, version, 2 events, last event, triggerer t1", got)
	}
	entry, err := f.st.StateGet(f.ctx, core.AssetScope(w.AssetID), core.WatcherCursorKey("landing"))
	must(t, err, "read the cursor as asset state")
	if entry.UpdatedBy.Kind != core.StateWriterWatcher || entry.UpdatedBy.Watcher != "landing" {
		t.Errorf("cursor writer = %+v, want watcher landing", entry.UpdatedBy)
	}

	// A stale version, another triggerer: nothing of the commit is written.
	_, err = commit("t1", 0, `{"after":"f9"}`, 3)
	wantErr(t, err, core.ErrConflict, "commit from a stale cursor version")
	_, err = commit("t2", res.Versions[0], `{"after":"f9"}`, 3)
	wantErr(t, err, core.ErrConflict, "commit by a triggerer that does not own the trigger")
	if n, _ := f.st.AssetEventCount(f.ctx, &store.AssetEventListParams{AssetID: w.AssetID}); n != 2 {
		t.Fatalf("events after refused commits = %d, want 2", n)
	}
	if got := f.watchers()[0]; string(got.Cursor) != `{"after":"f1"}` {
		t.Fatalf("cursor after refused commits = %s, want unchanged", got.Cursor)
	}
	// A cursor alone (nothing new, the watermark moved) commits no event.
	res2, err := commit("t1", res.Versions[0], `{"after":"f2"}`, 0)
	must(t, err, "commit a cursor alone")
	if res2.Versions[0] <= res.Versions[0] {
		t.Errorf("new version %d not after %d", res2.Versions[0], res.Versions[0])
	}
	// Other state keys commit with the batch, as the watcher's; nil deletes.
	_, err = f.st.WatcherCommit(f.ctx, &store.WatcherCommitParams{TriggerID: w.TriggerID, TriggererID: "t1", Now: f.at(time.Minute),
		State: []store.WatcherCursor{{AssetID: w.AssetID, Watcher: "landing", Key: "etag", Value: json.RawMessage(`"abc"`)}}})
	must(t, err, "commit a state key")
	etag, err := f.st.StateGet(f.ctx, core.AssetScope(w.AssetID), "etag")
	if err != nil || string(etag.Value) != `"abc"` || etag.UpdatedBy.Watcher != "landing" {
		t.Fatalf("state key after commit = %+v, %v; want \"abc\" written by watcher landing", etag, err)
	}
	_, err = f.st.WatcherCommit(f.ctx, &store.WatcherCommitParams{TriggerID: w.TriggerID, TriggererID: "t1", Now: f.at(time.Minute),
		State: []store.WatcherCursor{{AssetID: w.AssetID, Watcher: "landing", Key: "etag"}}})
	must(t, err, "delete a state key")
	_, err = f.st.StateGet(f.ctx, core.AssetScope(w.AssetID), "etag")
	wantErr(t, err, core.ErrNotFound, "read the deleted state key")

	// An admin write of the cursor makes a poll that read the old one conflict.
	must(t, f.st.StateSet(f.ctx, &store.StateSetParams{Scope: core.AssetScope(w.AssetID), Key: core.WatcherCursorKey("landing"),
		Value: json.RawMessage(`null`), Now: f.at(2 * time.Minute), By: core.UserWriter("admin")}), "reset the cursor")
	_, err = commit("t1", res2.Versions[0], `{"after":"f3"}`, 1)
	wantErr(t, err, core.ErrConflict, "commit over an admin's cursor")

	// Health of polls.
	must(t, f.st.WatcherReportPolls(f.ctx, []store.WatcherPoll{{TriggerID: w.TriggerID, At: f.at(3 * time.Minute),
		Duration: 40 * time.Millisecond, Err: "source down", ErrorsInRow: 2}}), "report a failed poll")
	got = f.watchers()[0]
	if got.LastError != "source down" || got.ErrorsInRow != 2 || got.LastPollMillis != 40 ||
		!sameTime(got.LastErrorAt, ptr(f.at(3*time.Minute))) {
		t.Fatalf("health after a failed poll = %+v", got)
	}
	must(t, f.st.WatcherReportPolls(f.ctx, []store.WatcherPoll{{TriggerID: w.TriggerID, At: f.at(4 * time.Minute)}}), "report a poll")
	got = f.watchers()[0]
	if got.LastError != "source down" || got.ErrorsInRow != 0 || !sameTime(got.LastPollAt, ptr(f.at(4*time.Minute))) {
		t.Fatalf("health after a good poll = %+v, want the last error kept, none in a row", got)
	}
	// A good poll's report carrying an earlier poll's error (failed, then
	// recovered, between two reports) keeps that error's own time.
	must(t, f.st.WatcherReportPolls(f.ctx, []store.WatcherPoll{{TriggerID: w.TriggerID, At: f.at(6 * time.Minute),
		Err: "timeout", ErrAt: f.at(5 * time.Minute)}}), "report a recovered poll")
	got = f.watchers()[0]
	if got.LastError != "timeout" || got.ErrorsInRow != 0 || !sameTime(got.LastErrorAt, ptr(f.at(5*time.Minute))) ||
		!sameTime(got.LastPollAt, ptr(f.at(6*time.Minute))) {
		t.Fatalf("health after a recovered poll = %+v, want its error at 5m, the poll at 6m", got)
	}
}

func ptr[T any](v T) *T { return &v }
