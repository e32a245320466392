package storetest

import (
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// testDagInfo: a DAG's versions list in the database by number (paged,
// ordered either way) and read one by number; run counts per DAG and
// state come in one query, leaving out DAGs without runs.
func testDagInfo(t *testing.T, f *fixture) {
	for i := range 3 {
		spec := core.DAG{DagID: "etl", Description: string(rune('a' + i)), Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}}
		_, _, err := f.st.DagSync(f.ctx, &store.DagSyncParams{Spec: spec, Hash: spec.Description, Now: f.now})
		must(t, err, "sync version")
	}
	page, err := f.st.DagVersionList(f.ctx, &store.DagVersionListParams{DagID: "etl", Page: store.Page{Limit: 2, OrderBy: "-version_number"}})
	must(t, err, "list versions")
	if len(page) != 2 || page[0].Version != 3 || page[1].Version != 2 || page[0].Hash != "c" {
		t.Errorf("versions newest first, page of 2 = %+v", page)
	}
	n, err := f.st.DagVersionCount(f.ctx, &store.DagVersionListParams{DagID: "etl"})
	must(t, err, "count versions")
	if n != 3 {
		t.Errorf("%d versions, want 3", n)
	}
	v, err := f.st.DagVersionByNumber(f.ctx, "etl", 2)
	must(t, err, "get version 2")
	if v.Spec.Description != "b" {
		t.Errorf("version 2's spec = %+v", v.Spec)
	}
	_, err = f.st.DagVersionByNumber(f.ctx, "etl", 9)
	wantErr(t, err, core.ErrNotFound, "get version 9")

	r1 := f.run("etl", "r1")
	f.run("etl", "r2")
	f.run("other", "o1")
	f.dag("idle")
	_, err = f.st.DagRunSetState(f.ctx, &store.DagRunSetStateParams{ID: r1.ID, To: core.RunFailed, Now: f.now})
	must(t, err, "fail r1")
	counts, err := f.st.DagRunStateCounts(f.ctx, []string{"etl", "other", "idle"})
	must(t, err, "state counts")
	if counts["etl"][core.RunFailed] != 1 || counts["etl"][core.RunQueued] != 1 || counts["other"][core.RunQueued] != 1 || counts["idle"] != nil {
		t.Errorf("state counts = %v", counts)
	}
}
