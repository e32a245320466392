package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func testDagWarnings(t *testing.T, f *fixture) {
	f.dag("b")
	f.dag("a")
	set := func(dagID, typ, msg string, at time.Time) {
		t.Helper()
		must(t, f.st.DagWarningSet(f.ctx, &core.DagWarning{DagID: dagID, WarningType: typ, Message: msg, Timestamp: at}), "set warning")
	}
	set("b", "unquoted trigger data", "b1", f.now)
	set("a", "unquoted trigger data", "a1", f.at(time.Second))
	set("a", "other", "a2", f.at(2*time.Second))
	set("a", "unquoted trigger data", "a1 again", f.at(3*time.Second)) // replaces
	list := func(p store.DagWarningListParams) []string {
		t.Helper()
		l, err := f.st.DagWarningList(f.ctx, &p)
		must(t, err, "list warnings")
		n, err := f.st.DagWarningCount(f.ctx, &p)
		must(t, err, "count warnings")
		var out []string
		for _, w := range l {
			out = append(out, w.DagID+"/"+w.WarningType+": "+w.Message)
		}
		if p.Limit == 0 && n != len(l) {
			t.Errorf("count %d, list %d for %+v", n, len(l), p)
		}
		return out
	}
	check := func(what string, got []string, want ...string) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	check("all", list(store.DagWarningListParams{}),
		"a/other: a2", "a/unquoted trigger data: a1 again", "b/unquoted trigger data: b1")
	check("dag a", list(store.DagWarningListParams{DagID: "a"}), "a/other: a2", "a/unquoted trigger data: a1 again")
	check("one type", list(store.DagWarningListParams{WarningType: "unquoted trigger data"}),
		"a/unquoted trigger data: a1 again", "b/unquoted trigger data: b1")
	check("newest first, second page", list(store.DagWarningListParams{Page: store.Page{OrderBy: "-timestamp", Limit: 1, Offset: 1}}),
		"a/other: a2")
	must(t, f.st.DagWarningDelete(f.ctx, "a", "other"), "delete")
	must(t, f.st.DagWarningDelete(f.ctx, "a", "never"), "delete absent")
	check("after delete", list(store.DagWarningListParams{DagID: "a"}), "a/unquoted trigger data: a1 again")
}

func testDagFiles(t *testing.T, f *fixture) {
	b := store.DagFile{Fileloc: "/dags/b.yaml", Parser: "p1", Sum: "s1", Error: "b.yaml:1:1: bad", ParsedAt: f.now}
	a := store.DagFile{Fileloc: "/dags/a.yaml", Parser: "p1", Sum: "s2", DagIDs: []string{"a"}, DAGs: `[{"dag_id":"a"}]`, ParsedAt: f.now}
	must(t, f.st.DagFileSet(f.ctx, &b), "set b")
	must(t, f.st.DagFileSet(f.ctx, &a), "set a")
	a2 := store.DagFile{Fileloc: "/dags/a.yaml", Parser: "p2", Sum: "s3", DagIDs: []string{"a2", "b2"},
		DAGs: `[{"dag_id":"a2"},{"dag_id":"b2"}]`, ParsedAt: f.at(time.Second)}
	must(t, f.st.DagFileSet(f.ctx, &a2), "replace a")
	list, err := f.st.DagFileList(f.ctx, nil)
	must(t, err, "list")
	if diff := cmp.Diff([]store.DagFile{a2, b}, list, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("dag files after replacing a (-want +got):\n%s", diff)
	}
	// Without the DAGs: every other field, and one file's whole by Get.
	list, err = f.st.DagFileList(f.ctx, &store.DagFileListParams{NoDAGs: true})
	must(t, err, "list without dags")
	a2bare := a2
	a2bare.DAGs = ""
	if diff := cmp.Diff([]store.DagFile{a2bare, b}, list, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("dag files without their dags (-want +got):\n%s", diff)
	}
	got, err := f.st.DagFileGet(f.ctx, "/dags/a.yaml")
	must(t, err, "get a")
	if diff := cmp.Diff(&a2, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("dag file a (-want +got):\n%s", diff)
	}
	if _, err := f.st.DagFileGet(f.ctx, "/dags/never.yaml"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("get of a file never recorded: err = %v, want core.ErrNotFound", err)
	}
	must(t, f.st.DagFileDelete(f.ctx, "/dags/a.yaml"), "delete a")
	must(t, f.st.DagFileDelete(f.ctx, "/dags/never.yaml"), "delete absent")
	list, err = f.st.DagFileList(f.ctx, nil)
	must(t, err, "list after delete")
	if diff := cmp.Diff([]store.DagFile{b}, list, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("dag files after deleting a (-want +got):\n%s", diff)
	}
}
