package storetest

// The reads behind the overview pages of the web UI: the DAGs list's
// filters and last runs, the grid's state counts, the assets list's last
// events.

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// testDagListSearchTag: the DAGs list filters by a case-insensitive id
// substring (wildcards taken literally) and by exact tags (any of them, or
// all), and counts with the same filters.
func testDagListSearchTag(t *testing.T, f *fixture) {
	sync := func(id string, tags ...string) {
		t.Helper()
		_, _, err := f.st.DagSync(f.ctx, &store.DagSyncParams{Spec: core.DAG{DagID: id, Tags: tags,
			Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}}, Hash: "h-" + id, Now: f.now})
		must(t, err, "sync "+id)
	}
	sync("Sales_Daily", "finance", "daily")
	sync("salesXdaily", "fin")
	sync("hr_report", `we"ird`, "finance-eu")
	sync("100%_done")

	cases := []struct {
		search string
		tags   []string
		all    bool
		want   []string
	}{
		{search: "sales", want: []string{"Sales_Daily", "salesXdaily"}},
		{search: "S_D", want: []string{"Sales_Daily"}}, // "_" is not a wildcard
		{search: "%", want: []string{"100%_done"}},
		{tags: []string{"finance"}, want: []string{"Sales_Daily"}}, // not "finance-eu"
		{tags: []string{"fin"}, want: []string{"salesXdaily"}},
		{tags: []string{`we"ird`}, want: []string{"hr_report"}},
		{tags: []string{"fin", "finance-eu"}, want: []string{"hr_report", "salesXdaily"}},
		{tags: []string{"finance", "daily"}, all: true, want: []string{"Sales_Daily"}},
		{tags: []string{"finance", "fin"}, all: true, want: nil},
		{search: "sales", tags: []string{"daily"}, want: []string{"Sales_Daily"}},
		{search: "nothing", want: nil},
	}
	for _, c := range cases {
		p := &store.DagListParams{Search: c.search, Tags: c.tags, AllTags: c.all}
		got, err := f.st.DagList(f.ctx, p)
		must(t, err, "list")
		if diff := cmp.Diff(c.want, dagIDs(got)); diff != "" {
			t.Errorf("search %q tags %q all %v (-want +got):\n%s", c.search, c.tags, c.all, diff)
		}
		n, err := f.st.DagCount(f.ctx, p)
		must(t, err, "count")
		if n != len(c.want) {
			t.Errorf("count with search %q tags %q all %v = %d, want %d", c.search, c.tags, c.all, n, len(c.want))
		}
	}
}

// testDagRunRecent: the newest runs of each asked DAG, oldest first, in one
// call; other DAGs' runs are not returned.
func testDagRunRecent(t *testing.T, f *fixture) {
	for i := range 5 {
		f.run("a", fmt.Sprintf("a%d", i))
	}
	f.run("b", "b0")
	f.run("c", "c0")
	got, err := f.st.DagRunRecent(f.ctx, &store.DagRunRecentParams{DagIDs: []string{"a", "b", "none"}, PerDag: 3})
	must(t, err, "recent runs")
	var ids []string
	for _, r := range got {
		ids = append(ids, r.RunID)
	}
	if diff := cmp.Diff([]string{"a2", "a3", "a4", "b0"}, ids); diff != "" {
		t.Errorf("recent runs (-want +got):\n%s", diff)
	}
	none, err := f.st.DagRunRecent(f.ctx, &store.DagRunRecentParams{PerDag: 3})
	must(t, err, "recent runs of no DAG")
	if len(none) != 0 {
		t.Errorf("recent runs of no DAG = %v, want none", none)
	}
	_, err = f.st.DagRunRecent(f.ctx, &store.DagRunRecentParams{DagIDs: []string{"a"}})
	wantErr(t, err, core.ErrInvalid, "recent runs with PerDag 0")
}

// testTaskInstanceStateCounts: the grid's one query counts a run's current
// tries per task and state, mapped tasks in groups, ended groups with
// their end; runs not asked for are left out.
func testTaskInstanceStateCounts(t *testing.T, f *fixture) {
	mapped := func(i int, state core.TIState) store.NewTaskInstance {
		ti := newTI("m", state)
		ti.MapIndex = i
		return ti
	}
	a := f.run("d", "a", newTI("solo", core.TINone), mapped(0, core.TINone), mapped(1, core.TINone), mapped(2, core.TIFailed))
	f.run("d", "b", newTI("solo", core.TINone))
	c := f.run("d", "c", newTI("solo", core.TIQueued))

	tis, err := f.st.TaskInstanceList(f.ctx, &store.TaskInstanceListParams{DagRunID: a.ID})
	must(t, err, "list run a")
	var ids []string
	for _, ti := range tis {
		if ti.TaskID == "solo" || ti.MapIndex == 0 {
			ids = append(ids, ti.ID)
		}
	}
	_, err = f.st.TaskInstanceSetState(f.ctx, &store.TaskInstanceSetStateParams{IDs: ids, To: core.TISuccess, Now: f.at(time.Minute)})
	must(t, err, "finish solo and m[0]")

	got, err := f.st.TaskInstanceStateCounts(f.ctx, []int64{c.ID, a.ID})
	must(t, err, "state counts")
	end := f.at(time.Minute)
	want := []store.TaskInstanceStateCount{
		{DagRunID: a.ID, TaskID: "m", State: core.TINone, Count: 1, Mapped: true},
		{DagRunID: a.ID, TaskID: "m", State: core.TIFailed, Count: 1, Mapped: true},
		{DagRunID: a.ID, TaskID: "m", State: core.TISuccess, Count: 1, Mapped: true, LastEnd: &end},
		{DagRunID: a.ID, TaskID: "solo", State: core.TISuccess, Count: 1, LastEnd: &end},
		{DagRunID: c.ID, TaskID: "solo", State: core.TIQueued, Count: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("state counts (-want +got):\n%s", diff)
	}
	// Only the named tasks' groups: what a try's end counts of the
	// upstream tasks of its successors.
	got, err = f.st.TaskInstanceStateCounts(f.ctx, []int64{c.ID, a.ID}, "m", "absent")
	must(t, err, "state counts of task m")
	if diff := cmp.Diff(want[:3], got); diff != "" {
		t.Errorf("state counts of task m (-want +got):\n%s", diff)
	}
	none, err := f.st.TaskInstanceStateCounts(f.ctx, nil)
	must(t, err, "state counts of no run")
	if len(none) != 0 {
		t.Errorf("state counts of no run = %v", none)
	}
}

// testAssetLastEventTimes: a listed asset carries its newest event (by
// id), read for the page in one query; one without events none.
func testAssetLastEventTimes(t *testing.T, f *fixture) {
	must(t, f.assetDag(producer("prod", orders, customers), f.now), "sync producer")
	o, _ := f.st.AssetGetByName(f.ctx, "orders")
	var newest int64
	for i, at := range []time.Duration{time.Minute, 3 * time.Minute, 2 * time.Minute} {
		ev, err := f.st.AssetEventInsert(f.ctx, &store.AssetEventParams{AssetID: o.ID, SourceKind: core.AssetSourceAPI, Now: f.at(at)})
		must(t, err, fmt.Sprintf("event %d", i))
		newest = ev.ID
	}
	list, err := f.st.AssetList(f.ctx, &store.AssetListParams{})
	must(t, err, "list assets")
	got := map[string]*core.LastAssetEvent{}
	for _, a := range list {
		got[a.Name] = a.LastEvent
	}
	// The newest event (by id) is the third, stamped 2 minutes in.
	want := map[string]*core.LastAssetEvent{"orders": {ID: newest, Timestamp: f.at(2 * time.Minute)}, "customers": nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("last events (-want +got):\n%s", diff)
	}
}

// testAssetLinks: the asset graph's one query gives each asked asset's
// producing and reading tasks and scheduled DAGs, active DAGs only.
func testAssetLinks(t *testing.T, f *fixture) {
	must(t, f.assetDag(producer("prod", orders, customers), f.now), "sync producer")
	must(t, f.assetDag(consumer("cons", orders), f.now), "sync consumer")
	must(t, f.assetDag(consumer("gone", customers), f.now), "sync a consumer to deactivate")
	must(t, f.st.DagDeactivateMissing(f.ctx, &store.DagDeactivateParams{Keep: []string{"prod", "cons"}}), "deactivate gone")
	o, _ := f.st.AssetGetByName(f.ctx, "orders")
	c, _ := f.st.AssetGetByName(f.ctx, "customers")
	got, err := f.st.AssetLinks(f.ctx, []int64{o.ID, c.ID})
	must(t, err, "asset links")
	at := func(l store.AssetLink) store.AssetLink { l.CreatedAt, l.UpdatedAt = f.now, f.now; return l }
	want := []store.AssetLink{
		at(store.AssetLink{AssetID: o.ID, Kind: store.AssetLinkProducer, DagID: "prod", TaskID: "load"}),
		at(store.AssetLink{AssetID: o.ID, Kind: store.AssetLinkReader, DagID: "cons", TaskID: "use"}),
		at(store.AssetLink{AssetID: o.ID, Kind: store.AssetLinkScheduled, DagID: "cons"}),
		at(store.AssetLink{AssetID: c.ID, Kind: store.AssetLinkProducer, DagID: "prod", TaskID: "load"}),
	}
	if o.ID > c.ID {
		want = append(want[3:], want[:3]...)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("asset links (-want +got):\n%s", diff)
	}
	if got, err := f.st.AssetLinks(f.ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("links of no asset = %v, %v; want none", got, err)
	}
}
