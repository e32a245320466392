package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// pagedList is one of the store's paged lists, seen through a key per row.
type pagedList struct {
	name  string
	order store.Order
	list  func(store.Page) ([]string, error)
	count func() (int, error)
}

// keys maps a list's rows to their keys.
func keys[T any](items []T, err error, key func(T) string) ([]string, error) {
	if err != nil {
		return nil, err
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = key(it)
	}
	return out, nil
}

// testPagingEveryOrder: every list, ordered by each of its documented
// fields both ways, counts what it lists, pages stably (the pages of two
// rows put together are the whole list, ties included) and reverses
// exactly when descending (nulls last ascending, first descending). An
// unknown field or a negative limit is refused, naming what is allowed.
func testPagingEveryOrder(t *testing.T, f *fixture) {
	f.pagingSeed()
	for _, l := range f.pagedLists() {
		total, err := l.count()
		must(t, err, "count "+l.name)
		for _, field := range append([]string{""}, l.order.Fields...) {
			all, err := l.list(store.Page{OrderBy: field})
			must(t, err, fmt.Sprintf("list %s by %q", l.name, field))
			if len(all) != total || total < 3 {
				t.Fatalf("%s by %q: %d rows, count %d; want equal and at least 3 (seed more)", l.name, field, len(all), total)
			}
			if field == "" {
				continue
			}
			checkPages(t, l, field, all)
			desc, err := l.list(store.Page{OrderBy: "-" + field})
			must(t, err, fmt.Sprintf("list %s by -%s", l.name, field))
			slices.Reverse(desc)
			if diff := cmp.Diff(all, desc); diff != "" {
				t.Errorf("%s by -%s is not the reverse of by %s (-asc +reversed desc):\n%s", l.name, field, field, diff)
			}
			checkPages(t, l, "-"+field, desc)
		}
		_, err = l.list(store.Page{OrderBy: "-nope"})
		wantErr(t, err, core.ErrInvalid, l.name+" by an unknown field")
		if !strings.Contains(err.Error(), strings.Join(l.order.Fields, ", ")) {
			t.Errorf("%s by an unknown field: %q does not name the allowed fields", l.name, err)
		}
		_, err = l.list(store.Page{Limit: -1})
		wantErr(t, err, core.ErrInvalid, l.name+" with a negative limit")
	}
}

// checkPages fails unless the pages of two rows in order by, put together,
// are all (in reverse when by is descending: all is then reversed).
func checkPages(t *testing.T, l pagedList, by string, all []string) {
	t.Helper()
	var paged []string
	for off := 0; off < len(all)+2; off += 2 {
		page, err := l.list(store.Page{Limit: 2, Offset: off, OrderBy: by})
		must(t, err, fmt.Sprintf("page of %s at %d", l.name, off))
		paged = append(paged, page...)
	}
	if strings.HasPrefix(by, "-") {
		slices.Reverse(paged)
	}
	if diff := cmp.Diff(all, paged); diff != "" {
		t.Errorf("%s by %q: pages of 2 differ from the whole list (-whole +pages):\n%s", l.name, by, diff)
	}
}

// pagingSeed puts a few rows in every paged list, with ties and nulls in
// the fields they are ordered by.
func (f *fixture) pagingSeed() {
	t := f.t
	for i, id := range []string{"d1", "d2", "d3"} {
		f.dag(id)
		must(t, f.st.DagSetPaused(f.ctx, id, i != 1), "pause "+id)
	}
	next := f.at(time.Hour)
	must(t, f.st.DagSetNextRunAfter(f.ctx, "d2", &next), "next run of d2")
	mapped := func(task string, i int) store.NewTaskInstance {
		ti := newTI(task, core.TINone)
		ti.MapIndex = i
		return ti
	}
	for i, runID := range []string{"r1", "r2", "r3", "r4"} {
		run := f.run("d"+strconv.Itoa(i%2+1), runID, newTI("a", core.TINone), mapped("m", 0), mapped("m", 1))
		if i%2 == 0 { // r1 and r3 start at the same time, r2 and r4 never
			_, err := f.st.DagRunSetState(f.ctx, &store.DagRunSetStateParams{ID: run.ID, To: core.RunRunning, Now: f.now})
			must(t, err, "start "+runID)
		}
		must(t, f.st.XComSet(f.ctx, &core.XCom{DagID: run.DagID, RunID: runID, TaskID: "a", MapIndex: -1, Key: "k" + runID,
			Value: json.RawMessage(`1`), Timestamp: f.now}), "xcom")
	}
	for i := range 3 {
		x := &core.XCom{DagID: "d1", RunID: "r1", TaskID: "m", MapIndex: i % 2, Key: "k" + strconv.Itoa(i),
			Value: json.RawMessage(`2`), Timestamp: f.at(time.Duration(i%2) * time.Second)}
		must(t, f.st.XComSet(f.ctx, x), "mapped xcom")
		must(t, f.st.ImportErrorSet(f.ctx, fmt.Sprintf("f%d.yaml", 3-i), "bad", f.at(time.Duration(i%2)*time.Second)), "import error")
		must(t, f.st.PoolUpsert(f.ctx, &core.Pool{Name: "p" + strconv.Itoa(i), Slots: i % 2}), "pool")
		must(t, f.st.ConnectionUpsert(f.ctx, &core.Connection{ID: "c" + strconv.Itoa(3-i), URI: "https://x"}), "connection")
		must(t, f.st.VariableUpsert(f.ctx, &core.Variable{Key: "v" + strconv.Itoa(3-i), Value: "x"}), "variable")
		b, err := f.st.BackfillCreate(f.ctx, &store.BackfillCreateParams{DagID: "d" + strconv.Itoa(i%2+1),
			FromDate: f.at(-time.Duration(3-i) * time.Hour), ToDate: f.at(time.Duration(i%2) * time.Hour),
			ReprocessBehavior: core.ReprocessNone, MaxActiveRuns: 1, Now: f.at(time.Duration(i%2) * time.Second)})
		must(t, err, "backfill")
		if i == 1 {
			_, err := f.st.BackfillComplete(f.ctx, b.ID, f.now)
			must(t, err, "complete backfill")
		}
		must(t, f.st.AuditLogAdd(f.ctx, &core.AuditEntry{When: f.at(time.Duration(i%2) * time.Second), User: "u" + strconv.Itoa(i%2),
			Action: "dag.pause", Target: "d1"}), "audit")
	}
	r1, err := f.st.DagRunGet(f.ctx, "d1", "r1")
	must(t, err, "get r1")
	for i := range 4 { // two at each time: ties in created_at; one claimed: two states
		cb := core.Callback{Level: core.CallbackTask, Event: core.OnRetry, DagID: "d1", RunID: "r1", DagRunID: r1.ID, TaskID: "a",
			MapIndex: core.NoMapIndex, TryNumber: i + 1, Spec: core.CallbackSpec{Command: "echo"}, Outcome: string(core.TIUpForRetry)}
		must(t, f.st.CallbackInsert(f.ctx, []core.Callback{cb}, f.at(time.Duration(i%2)*time.Second)), "callback")
	}
	_, err = f.st.CallbackClaim(f.ctx, &store.CallbackClaimParams{WorkerID: "w", Limit: 1, Now: f.now})
	must(t, err, "claim a callback")
	assets := []core.Asset{{Name: "b", URI: "s3://b"}, {Name: "a", URI: "s3://a", Group: "g"}, {Name: "c", URI: "s3://c", Group: "g"}}
	must(t, f.assetDag(producer("prod", assets...), f.now), "sync assets")
	ids := make([]int64, len(assets))
	for i, a := range assets {
		m, err := f.st.AssetGetByName(f.ctx, a.Name)
		must(t, err, "get asset")
		ids[i] = m.ID
	}
	for i := range 4 {
		p := &store.AssetEventParams{AssetName: assets[i%3].Name, SourceKind: core.AssetSourceAPI, Now: f.at(time.Duration(i%2) * time.Second)}
		if i%2 == 0 {
			p.SourceKind, p.SourceDagID, p.SourceRunID, p.SourceTaskID = core.AssetSourceTask, "prod", "r", "load"
		}
		_, err := f.st.AssetEventInsert(f.ctx, p)
		must(t, err, "asset event")
		must(t, f.st.AssetAliasAssociate(f.ctx, &store.AssetAliasAssociateParams{Alias: "al" + strconv.Itoa(i%3), AssetID: ids[i%3],
			Now: f.now}), "associate alias")
	}
}

// pagedLists returns every paged list of the store, unfiltered.
func (f *fixture) pagedLists() []pagedList {
	ctx, st := f.ctx, f.st
	return []pagedList{
		{"dags", store.DagOrder, func(pg store.Page) ([]string, error) {
			l, err := st.DagList(ctx, &store.DagListParams{Page: pg})
			return keys(l, err, func(d core.DagModel) string { return d.DagID })
		}, func() (int, error) { return st.DagCount(ctx, &store.DagListParams{}) }},
		{"dag runs", store.DagRunOrder, func(pg store.Page) ([]string, error) {
			l, err := st.DagRunList(ctx, &store.DagRunListParams{Page: pg})
			return keys(l, err, func(r core.DagRun) string { return r.RunID })
		}, func() (int, error) { return st.DagRunCount(ctx, &store.DagRunListParams{}) }},
		{"task instances", store.TaskInstanceOrder, func(pg store.Page) ([]string, error) {
			l, err := st.TaskInstanceList(ctx, &store.TaskInstanceListParams{Page: pg})
			return keys(l, err, func(ti core.TaskInstance) string { return fmt.Sprint(ti.RunID, ti.TaskID, ti.MapIndex) })
		}, func() (int, error) { return st.TaskInstanceCount(ctx, &store.TaskInstanceListParams{}) }},
		{"xcom", store.XComOrder, func(pg store.Page) ([]string, error) {
			l, err := st.XComList(ctx, &store.XComListParams{DagID: "d1", RunID: "r1", Page: pg})
			return keys(l, err, func(x core.XCom) string { return fmt.Sprint(x.TaskID, x.MapIndex, x.Key) })
		}, func() (int, error) { return st.XComCount(ctx, &store.XComListParams{DagID: "d1", RunID: "r1"}) }},
		{"import errors", store.ImportErrorOrder, func(pg store.Page) ([]string, error) {
			l, err := st.ImportErrorList(ctx, &store.ImportErrorListParams{Page: pg})
			return keys(l, err, func(e core.ImportError) string { return e.Filename })
		}, func() (int, error) { return st.ImportErrorCount(ctx, &store.ImportErrorListParams{}) }},
		{"pools", store.PoolOrder, func(pg store.Page) ([]string, error) {
			l, err := st.PoolList(ctx, &store.PoolListParams{WithOccupancy: true, Page: pg})
			return keys(l, err, func(p core.Pool) string { return p.Name })
		}, func() (int, error) { return st.PoolCount(ctx, &store.PoolListParams{}) }},
		{"connections", store.ConnectionOrder, func(pg store.Page) ([]string, error) {
			l, err := st.ConnectionList(ctx, &store.ConnectionListParams{Page: pg})
			return keys(l, err, func(c core.Connection) string { return c.ID })
		}, func() (int, error) { return st.ConnectionCount(ctx, &store.ConnectionListParams{}) }},
		{"variables", store.VariableOrder, func(pg store.Page) ([]string, error) {
			l, err := st.VariableList(ctx, &store.VariableListParams{Page: pg})
			return keys(l, err, func(v core.Variable) string { return v.Key })
		}, func() (int, error) { return st.VariableCount(ctx, &store.VariableListParams{}) }},
		{"audit log", store.AuditLogOrder, func(pg store.Page) ([]string, error) {
			l, err := st.AuditLogList(ctx, &store.AuditLogListParams{Page: pg})
			return keys(l, err, func(e core.AuditEntry) string { return itoa(e.ID) })
		}, func() (int, error) { return st.AuditLogCount(ctx, &store.AuditLogListParams{}) }},
		{"assets", store.AssetOrder, func(pg store.Page) ([]string, error) {
			l, err := st.AssetList(ctx, &store.AssetListParams{Page: pg})
			return keys(l, err, func(a core.AssetModel) string { return a.Name })
		}, func() (int, error) { return st.AssetCount(ctx, &store.AssetListParams{}) }},
		{"asset aliases", store.AssetAliasOrder, func(pg store.Page) ([]string, error) {
			l, err := st.AssetAliasList(ctx, &store.AssetAliasListParams{Page: pg})
			return keys(l, err, func(a store.AssetAlias) string { return fmt.Sprint(a.Name, len(a.Assets)) })
		}, func() (int, error) { return st.AssetAliasCount(ctx, &store.AssetAliasListParams{}) }},
		{"backfills", store.BackfillOrder, func(pg store.Page) ([]string, error) {
			l, err := st.BackfillList(ctx, &store.BackfillListParams{Page: pg})
			return keys(l, err, func(b core.Backfill) string { return itoa(b.ID) })
		}, func() (int, error) { return st.BackfillCount(ctx, &store.BackfillListParams{}) }},
		{"callbacks", store.CallbackOrder, func(pg store.Page) ([]string, error) {
			l, err := st.CallbackList(ctx, &store.CallbackListParams{DagRunID: f.runID("d1", "r1"), Page: pg})
			return keys(l, err, func(c core.Callback) string { return itoa(c.ID) })
		}, func() (int, error) {
			return st.CallbackCount(ctx, &store.CallbackListParams{DagRunID: f.runID("d1", "r1")})
		}},
		{"asset events", store.AssetEventOrder, func(pg store.Page) ([]string, error) {
			l, err := st.AssetEventList(ctx, &store.AssetEventListParams{Page: pg})
			return keys(l, err, func(e core.AssetEvent) string { return itoa(e.ID) })
		}, func() (int, error) { return st.AssetEventCount(ctx, &store.AssetEventListParams{}) }},
	}
}

// runID returns the id of run runID of dagID.
func (f *fixture) runID(dagID, runID string) int64 {
	run, err := f.st.DagRunGet(f.ctx, dagID, runID)
	must(f.t, err, "get run "+runID)
	return run.ID
}
