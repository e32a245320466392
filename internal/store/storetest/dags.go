package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func testDagSyncVersions(t *testing.T, f *fixture) {
	spec := core.DAG{DagID: "etl", Description: "d1", Schedule: "@daily", Tags: []string{"a", "b"},
		Tasks: []core.Task{{TaskID: "extract", Operator: "bash", Args: map[string]any{"bash_command": "echo"}}}}
	sync := func(hash, deriver string, at time.Duration) (int64, store.DagSyncChange) {
		t.Helper()
		v, change, err := f.st.DagSync(f.ctx, &store.DagSyncParams{Spec: spec, Hash: hash, Paused: true, Now: f.at(at), Deriver: deriver})
		must(t, err, "sync "+hash+" by "+deriver)
		return v, change
	}
	v1, change := sync("h1", "p1", 0)
	if change != store.DagNewVersion || v1 == 0 {
		t.Fatalf("first sync: change=%v id=%d, want a new version", change, v1)
	}
	for _, c := range []struct {
		deriver string
		want    store.DagSyncChange
		why     string
	}{
		{"p1", store.DagUnchanged, "the same parser again"},
		{"p2", store.DagRederive, "another parser (an upgraded binary)"},
		{"p2", store.DagUnchanged, "that parser again"},
		{"", store.DagRederive, "an unnamed parser"},
		{"", store.DagRederive, "an unnamed parser again"},
		{"p2", store.DagRederive, "a named one after an unnamed"},
	} {
		if v, change := sync("h1", c.deriver, time.Minute); change != c.want || v != v1 {
			t.Fatalf("same-hash sync by %s: change=%v id=%d, want %v of version %d", c.why, change, v, c.want, v1)
		}
	}
	must(t, f.st.DagDeactivateMissing(f.ctx, &store.DagDeactivateParams{}), "deactivate")
	if back, change := sync("h1", "p2", time.Minute); change != store.DagRederive || back != v1 {
		t.Fatalf("same-hash sync of an inactive dag: change=%v id=%d, want version %d to rederive", change, back, v1)
	}
	spec.Description = "d2"
	spec.AssetSchedule, spec.AssetOrTime = []core.AssetRef{{Name: "orders"}}, true // its summary names the asset too
	v2, change, err := f.st.DagSync(f.ctx, &store.DagSyncParams{Spec: spec, Hash: "h2", Paused: false, Now: f.at(2 * time.Minute), Deriver: "p2"})
	must(t, err, "changed sync")
	if change != store.DagNewVersion || v2 == v1 {
		t.Fatalf("changed sync: change=%v id=%d, want a version other than %d", change, v2, v1)
	}

	d, err := f.st.DagGet(f.ctx, "etl")
	must(t, err, "get dag")
	want := core.DagModel{DagID: "etl", IsPaused: true, IsActive: true, Description: "d2", Schedule: "@daily or Asset: orders",
		Tags: []string{"a", "b"}, LatestVersion: v2, LastParsedTime: f.at(2 * time.Minute)}
	if diff := cmp.Diff(want, *d); diff != "" {
		t.Errorf("dag after syncs (-want +got), pause state must stay from the first sync:\n%s", diff)
	}
	latest, err := f.st.DagVersionLatest(f.ctx, "etl")
	must(t, err, "latest version")
	if latest.ID != v2 || latest.Version != 2 || latest.Hash != "h2" || latest.Spec.Description != "d2" {
		t.Errorf("latest version = %+v, want id %d number 2 hash h2 with the new spec", latest, v2)
	}
	first, err := f.st.DagVersionGet(f.ctx, v1)
	must(t, err, "get version 1")
	if first.Version != 1 || first.Spec.Description != "d1" || first.Spec.Tasks[0].Args["bash_command"] != "echo" {
		t.Errorf("version 1 = %+v, want number 1 with the original spec", first)
	}
	_, err = f.st.DagGet(f.ctx, "nope")
	wantErr(t, err, core.ErrNotFound, "get unknown dag")
	_, err = f.st.DagVersionGet(f.ctx, 999999)
	wantErr(t, err, core.ErrNotFound, "get unknown version")
	_, err = f.st.DagVersionLatest(f.ctx, "nope")
	wantErr(t, err, core.ErrNotFound, "latest version of unknown dag")
}

func testDagListPauseNextRun(t *testing.T, f *fixture) {
	for _, id := range []string{"c", "a", "b"} {
		f.dag(id)
	}
	must(t, f.st.DagSetPaused(f.ctx, "b", true), "pause b")
	next := f.at(time.Hour)
	must(t, f.st.DagSetNextRunAfter(f.ctx, "a", &next), "set next run of a")

	all, err := f.st.DagList(f.ctx, &store.DagListParams{})
	must(t, err, "list dags")
	if got := dagIDs(all); !cmp.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("dag ids = %v, want [a b c]", got)
	}
	if !all[1].IsPaused || all[0].IsPaused {
		t.Errorf("paused flags: a=%v b=%v, want a unpaused, b paused", all[0].IsPaused, all[1].IsPaused)
	}
	if all[0].NextRunAfter == nil || !all[0].NextRunAfter.Equal(next) {
		t.Errorf("next run of a = %v, want %v", all[0].NextRunAfter, next)
	}
	page, err := f.st.DagList(f.ctx, &store.DagListParams{Page: store.Page{Limit: 1, Offset: 1}})
	must(t, err, "list page")
	if got := dagIDs(page); !cmp.Equal(got, []string{"b"}) {
		t.Errorf("page (limit 1 offset 1) = %v, want [b]", got)
	}
	sel, err := f.st.DagList(f.ctx, &store.DagListParams{DagIDs: []string{"c", "a"}})
	must(t, err, "list selected")
	if got := dagIDs(sel); !cmp.Equal(got, []string{"a", "c"}) {
		t.Errorf("selected = %v, want [a c]", got)
	}
	must(t, f.st.DagSetNextRunAfter(f.ctx, "a", nil), "clear next run")
	a, err := f.st.DagGet(f.ctx, "a")
	must(t, err, "get a")
	if a.NextRunAfter != nil {
		t.Errorf("next run after clearing = %v, want nil", a.NextRunAfter)
	}
	wantErr(t, f.st.DagSetPaused(f.ctx, "nope", true), core.ErrNotFound, "pause unknown dag")
	wantErr(t, f.st.DagSetNextRunAfter(f.ctx, "nope", nil), core.ErrNotFound, "next run of unknown dag")
}

func dagIDs(ds []core.DagModel) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.DagID)
	}
	return out
}

func testDagDeactivateMissing(t *testing.T, f *fixture) {
	for _, id := range []string{"keep1", "keep2", "gone"} {
		f.dag(id)
	}
	must(t, f.st.DagDeactivateMissing(f.ctx, &store.DagDeactivateParams{Keep: []string{"keep1", "keep2"}}), "deactivate")
	active, err := f.st.DagList(f.ctx, &store.DagListParams{OnlyActive: true})
	must(t, err, "list active")
	if got := dagIDs(active); !cmp.Equal(got, []string{"keep1", "keep2"}) {
		t.Errorf("active dags = %v, want [keep1 keep2]", got)
	}
	f.dag("gone") // parsed again: active again
	active, err = f.st.DagList(f.ctx, &store.DagListParams{OnlyActive: true})
	must(t, err, "list active")
	if len(active) != 3 {
		t.Errorf("after re-sync, %d active dags, want 3", len(active))
	}
}

func testImportErrors(t *testing.T, f *fixture) {
	must(t, f.st.ImportErrorSet(f.ctx, "b.yaml", "bad b", f.now), "set b")
	must(t, f.st.ImportErrorSet(f.ctx, "a.yaml", "bad a", f.now), "set a")
	must(t, f.st.ImportErrorSet(f.ctx, "a.yaml", "worse a", f.at(time.Second)), "replace a")
	list, err := f.st.ImportErrorList(f.ctx, &store.ImportErrorListParams{})
	must(t, err, "list")
	if len(list) != 2 || list[0].Filename != "a.yaml" || list[0].Message != "worse a" ||
		!list[0].Timestamp.Equal(f.at(time.Second)) || list[1].Filename != "b.yaml" {
		t.Fatalf("import errors = %+v, want a.yaml (replaced) then b.yaml", list)
	}
	must(t, f.st.ImportErrorDelete(f.ctx, "a.yaml"), "delete a")
	must(t, f.st.ImportErrorDelete(f.ctx, "never.yaml"), "delete absent")
	list, err = f.st.ImportErrorList(f.ctx, &store.ImportErrorListParams{})
	must(t, err, "list")
	if len(list) != 1 || list[0].Filename != "b.yaml" {
		t.Errorf("after delete = %+v, want only b.yaml", list)
	}
}
