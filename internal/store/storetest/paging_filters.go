package storetest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// wantKeys fails unless a list call returned exactly want.
func wantKeys(t *testing.T, what string, got []string, err error, want ...string) {
	t.Helper()
	must(t, err, what)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// wantCount fails unless a count call returned want.
func wantCount(t *testing.T, what string, got int, err error, want int) {
	t.Helper()
	must(t, err, what)
	if got != want {
		t.Errorf("%s = %d, want %d", what, got, want)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	must(t, err, "parse id "+s)
	return n
}

// testPagingOrderValues: orders sort by the field's value, ties by the
// list's key in the same direction, nulls after every value, booleans
// false first: the same on every engine.
func testPagingOrderValues(t *testing.T, f *fixture) {
	f.pagingSeed()
	lists := map[string]pagedList{}
	for _, l := range f.pagedLists() {
		lists[l.name] = l
	}
	for _, tc := range []struct {
		list, by string
		want     []string
	}{
		{"dag runs", "", []string{"r4", "r3", "r2", "r1"}},                    // newest first
		{"dag runs", "start_date", []string{"r1", "r3", "r2", "r4"}},          // r2, r4 never started
		{"dag runs", "-start_date", []string{"r4", "r2", "r3", "r1"}},         // nulls first descending
		{"dags", "next_dagrun_run_after", []string{"d2", "d1", "d3", "prod"}}, // only d2 has one
		{"dags", "is_paused", []string{"d2", "prod", "d1", "d3"}},
		{"pools", "slots", []string{"p0", "p2", "p1", core.DefaultPool}},
		{"import errors", "", []string{"f1.yaml", "f2.yaml", "f3.yaml"}},
		{"connections", "-connection_id", []string{"c3", "c2", "c1"}},
		{"assets", "group", []string{"b", "a", "c"}}, // b in group "asset"; a, c in "g" by id
	} {
		got, err := lists[tc.list].list(store.Page{OrderBy: tc.by})
		wantKeys(t, tc.list+" by "+tc.by, got, err, tc.want...)
	}
}

// testPagingFiltersCount: every filter narrows the list and its count alike.
func testPagingFiltersCount(t *testing.T, f *fixture) {
	f.pagingSeed()
	ctx, st := f.ctx, f.st
	paused := true
	dags, err := st.DagList(ctx, &store.DagListParams{Paused: &paused})
	got, _ := keys(dags, err, func(d core.DagModel) string { return d.DagID })
	wantKeys(t, "paused dags", got, err, "d1", "d3")
	n, err := st.DagCount(ctx, &store.DagListParams{Paused: &paused, OnlyActive: true, DagIDs: []string{"d1", "d2"}})
	wantCount(t, "active paused dags of d1, d2", n, err, 1)

	tiKey := func(ti core.TaskInstance) string { return ti.RunID + "/" + ti.TaskID }
	tis, err := st.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagID: "d1", Page: store.Page{Limit: 2, Offset: 2}})
	got, _ = keys(tis, err, tiKey)
	wantKeys(t, "task instances of d1, third and fourth", got, err, "r1/m", "r3/a")
	n, err = st.TaskInstanceCount(ctx, &store.TaskInstanceListParams{DagID: "d1"})
	wantCount(t, "task instances of d1", n, err, 6)
	n, err = st.TaskInstanceCount(ctx, &store.TaskInstanceListParams{RunID: "r2", TaskID: "m", States: []core.TIState{core.TINone}})
	wantCount(t, "unscheduled m instances of r2", n, err, 2)

	mapIndex := 0
	xs, err := st.XComList(ctx, &store.XComListParams{DagID: "d1", RunID: "r1", MapIndex: &mapIndex})
	got, _ = keys(xs, err, func(x core.XCom) string { return x.Key })
	wantKeys(t, "xcom of map index 0", got, err, "k0", "k2")
	n, err = st.XComCount(ctx, &store.XComListParams{DagID: "d1", RunID: "r1", TaskID: "m"})
	wantCount(t, "xcom of m", n, err, 3)
	xs, err = st.XComList(ctx, &store.XComListParams{DagID: "d1", RunID: "r1", TaskID: "m", Key: "k1"})
	got, _ = keys(xs, err, func(x core.XCom) string { return x.Key })
	wantKeys(t, "xcom k1 of m", got, err, "k1")
	n, err = st.XComCount(ctx, &store.XComListParams{DagID: "d1", RunID: "r2"})
	wantCount(t, "xcom of a run d1 does not have", n, err, 0)

	busy, running, waiting, deferred := newTI("q", core.TIQueued), newTI("r", core.TIRunning), newTI("s", core.TIScheduled), newTI("d", core.TIDeferred)
	busy.Pool, busy.PoolSlots = "p1", 2
	running.Pool, running.PoolSlots = "p1", 3
	waiting.Pool, deferred.Pool = "p1", "p1"
	f.run("d3", "busy", busy, running, waiting, deferred, newTI("idle", core.TINone))
	pools, err := st.PoolList(ctx, &store.PoolListParams{Names: []string{"p1", "p2"}, WithOccupancy: true})
	must(t, err, "pools with occupancy")
	if len(pools) != 2 || pools[0].OccupiedSlots != 5 || pools[0].QueuedSlots != 2 || pools[0].RunningSlots != 3 ||
		pools[0].ScheduledSlots != 1 || pools[0].DeferredSlots != 1 || pools[1].OccupiedSlots != 0 {
		t.Errorf("pools p1, p2 with occupancy = %+v, want p1 with 2 queued, 3 running (5 occupied), 1 scheduled and 1 deferred slot, p2 with none", pools)
	}
	n, err = st.PoolCount(ctx, &store.PoolListParams{Names: []string{"p1", "nope"}})
	wantCount(t, "pools named p1 or nope", n, err, 1)

	entries, err := st.AuditLogList(ctx, &store.AuditLogListParams{User: "u0", Action: "dag.pause", Target: "d1"})
	if err == nil && (len(entries) != 2 || entries[0].ID < entries[1].ID) {
		t.Errorf("audit by u0 = %+v, want two, newest first", entries)
	}
	n, err = st.AuditLogCount(ctx, &store.AuditLogListParams{User: "u1"})
	wantCount(t, "audit by u1", n, err, 1)
	n, err = st.AssetEventCount(ctx, &store.AssetEventListParams{SourceDagID: "prod", SourceTaskID: "load"})
	wantCount(t, "asset events of prod.load", n, err, 2)
}

// testPagingKeyset: after/before id cursors start a page at an id, with
// the default order or its reverse; the count stays the whole list's; a
// cursor with another order is refused.
func testPagingKeyset(t *testing.T, f *fixture) {
	f.pagingSeed()
	ctx, st := f.ctx, f.st
	events := func(c store.Cursor, pg store.Page) ([]string, error) {
		l, err := st.AssetEventList(ctx, &store.AssetEventListParams{Cursor: c, Page: pg})
		return keys(l, err, func(e core.AssetEvent) string { return itoa(e.ID) })
	}
	all, err := events(store.Cursor{}, store.Page{})
	must(t, err, "all events")
	id := func(i int) int64 { return atoi(t, all[i]) }
	got, err := events(store.Cursor{AfterID: id(1)}, store.Page{Limit: 1})
	wantKeys(t, "events after the second, one", got, err, all[2])
	got, err = events(store.Cursor{BeforeID: id(2)}, store.Page{OrderBy: "-id"})
	wantKeys(t, "events before the third, newest first", got, err, all[1], all[0])
	got, err = events(store.Cursor{AfterID: id(0), BeforeID: id(3)}, store.Page{Offset: 1})
	wantKeys(t, "events between the first and the fourth, offset 1", got, err, all[2])
	n, err := st.AssetEventCount(ctx, &store.AssetEventListParams{Cursor: store.Cursor{AfterID: id(1)}})
	wantCount(t, "event count with a cursor", n, err, len(all))
	_, err = events(store.Cursor{AfterID: id(1)}, store.Page{OrderBy: "timestamp"})
	wantErr(t, err, core.ErrInvalid, "cursor with order_by timestamp")
	if !strings.Contains(err.Error(), "order_by id or -id") {
		t.Errorf("cursor with another order: %q does not say which orders a cursor takes", err)
	}
	_, err = events(store.Cursor{AfterID: -1}, store.Page{})
	wantErr(t, err, core.ErrInvalid, "negative cursor")

	audit := func(c store.Cursor) ([]string, error) {
		l, err := st.AuditLogList(ctx, &store.AuditLogListParams{Cursor: c, Page: store.Page{Limit: 10}})
		return keys(l, err, func(e core.AuditEntry) string { return itoa(e.ID) })
	}
	newest, err := audit(store.Cursor{})
	must(t, err, "audit log")
	got, err = audit(store.Cursor{BeforeID: atoi(t, newest[0])})
	wantKeys(t, "audit before the newest", got, err, newest[1:]...)
	got, err = audit(store.Cursor{AfterID: atoi(t, newest[2])})
	wantKeys(t, "audit after the oldest, newest first", got, err, newest[:2]...)
	_, err = st.AuditLogList(ctx, &store.AuditLogListParams{Cursor: store.Cursor{BeforeID: 5}, Page: store.Page{OrderBy: "when"}})
	wantErr(t, err, core.ErrInvalid, "audit cursor with order_by when")
}
