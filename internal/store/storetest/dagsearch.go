package storetest

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// testDagListSearchTag: the DAGs list filters by a case-insensitive id
// substring (wildcards taken literally) and by one exact tag, and counts
// with the same filters.
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
		search, tag string
		want        []string
	}{
		{search: "sales", want: []string{"Sales_Daily", "salesXdaily"}},
		{search: "S_D", want: []string{"Sales_Daily"}}, // "_" is not a wildcard
		{search: "%", want: []string{"100%_done"}},
		{tag: "finance", want: []string{"Sales_Daily"}}, // not "finance-eu"
		{tag: "fin", want: []string{"salesXdaily"}},
		{tag: `we"ird`, want: []string{"hr_report"}},
		{search: "sales", tag: "daily", want: []string{"Sales_Daily"}},
		{search: "nothing", want: nil},
	}
	for _, c := range cases {
		p := &store.DagListParams{Search: c.search, Tag: c.tag}
		got, err := f.st.DagList(f.ctx, p)
		must(t, err, "list")
		if diff := cmp.Diff(c.want, dagIDs(got)); diff != "" {
			t.Errorf("search %q tag %q (-want +got):\n%s", c.search, c.tag, diff)
		}
		n, err := f.st.DagCount(f.ctx, p)
		must(t, err, "count")
		if n != len(c.want) {
			t.Errorf("count with search %q tag %q = %d, want %d", c.search, c.tag, n, len(c.want))
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
