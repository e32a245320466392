package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// stateKit is what the shared state tests need of one kind: two distinct
// scopes of it, set up in the fixture, the writer its writes record, what
// a user's write reads back as, and the list that selects exactly one
// scope.
type stateKit struct {
	kind core.StateKind
	// scopes sets up and returns two scopes of the kind; a scope of the
	// kind whose run or asset does not exist; the list selecting scope a.
	scopes  func(f *fixture) (a, b, unknown core.StateScope)
	list    func(a core.StateScope) store.StateListParams
	writer  core.StateWriter // a task try's writer, as written and read back for scope a
	userAs  core.StateWriter // how a write by user "ada" reads back
	noScope core.StateScope  // a scope naming nothing
}

// stateKits are the kinds the shared tests run over.
var stateKits = []stateKit{
	{
		kind: core.StateTask,
		scopes: func(f *fixture) (core.StateScope, core.StateScope, core.StateScope) {
			f.run("etl", "r1")
			return taskScope("t", -1), taskScope("t", 0), core.TaskScope("etl", "nope", "t", -1)
		},
		list: func(a core.StateScope) store.StateListParams {
			return store.StateListParams{Kind: core.StateTask, DagID: a.DagID, RunID: a.RunID, TaskID: a.TaskID,
				MapIndex: &a.MapIndex}
		},
		writer: core.StateWriter{Kind: core.StateWriterTask, DagID: "etl", RunID: "r1", TaskID: "t", MapIndex: -1,
			TryNumber: 2},
		userAs:  core.UserWriter(""),
		noScope: core.StateScope{Kind: core.StateTask, DagID: "etl"},
	},
	{
		kind: core.StateAsset,
		scopes: func(f *fixture) (core.StateScope, core.StateScope, core.StateScope) {
			return f.assetScope("orders"), f.assetScope("customers"), core.AssetScope(999999)
		},
		list: func(a core.StateScope) store.StateListParams {
			return store.StateListParams{Kind: core.StateAsset, AssetID: a.AssetID}
		},
		writer:  core.StateWriter{Kind: core.StateWriterTask, DagID: "prod", RunID: "r1", TaskID: "load", MapIndex: 2, TryNumber: 3},
		userAs:  core.UserWriter("ada"),
		noScope: core.AssetScopeByName("orders"), // not resolved to an id
	},
}

// runStateKits runs fn once per kind, as a subtest.
func runStateKits(t *testing.T, f *fixture, fn func(t *testing.T, f *fixture, k stateKit)) {
	for _, k := range stateKits {
		t.Run(string(k.kind), func(t *testing.T) {
			g := *f
			g.t = t
			fn(t, &g, k)
		})
	}
}

// taskScope is the task-state scope of task t (map index mi) in etl/r1.
func taskScope(t string, mi int) core.StateScope { return core.TaskScope("etl", "r1", t, mi) }

// assetScope syncs producer DAG prod with orders and customers and returns
// the scope of the asset named name as the store reads it back.
func (f *fixture) assetScope(name string) core.StateScope {
	f.t.Helper()
	if _, err := f.st.AssetGetByName(f.ctx, name); err != nil {
		must(f.t, f.assetDag(producer("prod", orders, customers), f.now), "sync producer")
	}
	a, err := f.st.AssetGetByName(f.ctx, name)
	must(f.t, err, "get asset "+name)
	sc := core.AssetScope(a.ID)
	sc.AssetName, sc.AssetURI = a.Name, a.URI
	return sc
}

// setState writes key = value in sc by by, with an expiry for task state.
func (f *fixture) setState(sc core.StateScope, key, value string, by core.StateWriter, expires *time.Time, never bool) {
	f.t.Helper()
	must(f.t, f.st.StateSet(f.ctx, &store.StateSetParams{Scope: sc, Key: key, Value: json.RawMessage(value),
		Now: f.now, By: by, ExpiresAt: expires, NeverExpire: never}), "set "+key)
}

// setTaskState writes key = value in a task scope, by try 1 of its run.
func (f *fixture) setTaskState(sc core.StateScope, key, value string, expires *time.Time, never bool) {
	f.t.Helper()
	by := core.StateWriter{Kind: core.StateWriterTask, DagID: sc.DagID, RunID: sc.RunID, TaskID: sc.TaskID,
		MapIndex: sc.MapIndex, TryNumber: 1}
	f.setState(sc, key, value, by, expires, never)
}

// stateKeys lists every entry p selects as scope/key.
func (f *fixture) stateKeys(p store.StateListParams) []string {
	f.t.Helper()
	all, err := f.st.StateList(f.ctx, &p)
	must(f.t, err, "list state")
	out := []string{}
	for _, e := range all {
		out = append(out, e.Scope.String()+"/"+e.Key)
	}
	return out
}

// Every JSON type round-trips with its exact text (an integer stays an
// integer) with the writer and time; an overwrite replaces both; another
// scope is another namespace; bad writes are refused (docs/task-state.md,
// docs/asset-state.md).
func testStateRoundTrip(t *testing.T, f *fixture) {
	runStateKits(t, f, func(t *testing.T, f *fixture, k stateKit) {
		a, b, unknown := k.scopes(f)
		values := map[string]string{
			"int":    `42`,
			"big":    `9007199254740993`,
			"float":  `3.25`,
			"string": `"héllo \"quoted\" ✓"`,
			"bool":   `false`,
			"list":   `[1,"two",[3],{"four":4}]`,
			"object": `{"a":{"b":[true,null]},"empty":{}}`,
		}
		for key, v := range values {
			f.setState(a, key, v, k.writer, nil, false)
		}
		for key, v := range values {
			e, err := f.st.StateGet(f.ctx, a, key)
			must(t, err, "get "+key)
			want := &core.StateEntry{Scope: a, Key: key, Value: json.RawMessage(v), UpdatedAt: f.now, UpdatedBy: k.writer}
			if diff := cmp.Diff(want, e, cmp.FilterPath(func(p cmp.Path) bool {
				return p.Last().String() == ".AssetInactiveSince"
			}, cmp.Ignore())); diff != "" {
				t.Errorf("%s state %s (-want +got):\n%s", k.kind, key, diff)
			}
		}
		// Overwrite by a user: the value, the writer and the time change.
		f.setState(a, "int", `43`, core.UserWriter("ada"), nil, false)
		e, err := f.st.StateGet(f.ctx, a, "int")
		must(t, err, "get overwritten")
		if string(e.Value) != "43" || e.UpdatedBy != k.userAs {
			t.Errorf("overwritten entry = %+v, want 43 by %+v", e, k.userAs)
		}

		_, err = f.st.StateGet(f.ctx, a, "absent")
		wantErr(t, err, core.ErrNotFound, "get absent key")
		_, err = f.st.StateGet(f.ctx, b, "int")
		wantErr(t, err, core.ErrNotFound, "another scope is another namespace")
		set := func(sc core.StateScope, value string, by core.StateWriter) error {
			return f.st.StateSet(f.ctx, &store.StateSetParams{Scope: sc, Key: "k", Value: json.RawMessage(value), Now: f.now, By: by})
		}
		wantErr(t, set(unknown, `1`, k.writer), core.ErrNotFound, "set in a scope whose run or asset does not exist")
		wantErr(t, set(a, `{bad`, k.writer), core.ErrInvalid, "set invalid JSON")
		wantErr(t, set(a, `1`, core.StateWriter{Kind: "robot"}), core.ErrInvalid, "set with an unknown writer kind")
		wantErr(t, set(k.noScope, `1`, k.writer), core.ErrInvalid, "set in a scope naming nothing")
		_, err = f.st.StateGet(f.ctx, core.StateScope{Kind: "cursor"}, "k")
		wantErr(t, err, core.ErrInvalid, "get in an unknown kind")
	})
}

// Delete is a no-op when absent; a clear takes every key of one scope and
// nothing of another; lists page in the database in a stable order with a
// count, and refuse an unknown order_by.
func testStateDeleteClearPage(t *testing.T, f *fixture) {
	runStateKits(t, f, func(t *testing.T, f *fixture, k stateKit) {
		a, b, _ := k.scopes(f)
		for i := range 5 {
			f.setState(a, fmt.Sprintf("k%d", i), `1`, k.writer, nil, false)
		}
		f.setState(b, "k0", `1`, k.writer, nil, false)
		p := k.list(a)

		n, err := f.st.StateCount(f.ctx, &p)
		must(t, err, "count")
		if n != 5 {
			t.Errorf("count of scope a = %d, want 5 (scope b's key not counted)", n)
		}
		p.Page = store.Page{Limit: 2, Offset: 1}
		if got, want := f.stateKeys(p), []string{a.String() + "/k1", a.String() + "/k2"}; !cmp.Equal(got, want) {
			t.Errorf("page limit 2 offset 1 = %v, want %v", got, want)
		}
		p.Page = store.Page{Limit: 2, OrderBy: "-key"}
		if got, want := f.stateKeys(p), []string{a.String() + "/k4", a.String() + "/k3"}; !cmp.Equal(got, want) {
			t.Errorf("page ordered by -key = %v, want %v", got, want)
		}
		if n, _ := f.st.StateCount(f.ctx, &p); n != 5 {
			t.Errorf("count ignores the page: got %d, want 5", n)
		}
		p.Page = store.Page{OrderBy: "colour"}
		_, err = f.st.StateList(f.ctx, &p)
		wantErr(t, err, core.ErrInvalid, "list with an unknown order_by")
		p.Page = store.Page{}

		n64, err := f.st.StateDelete(f.ctx, &store.StateDeleteParams{Scope: a, Key: "absent"})
		must(t, err, "delete absent key")
		if n64 != 0 {
			t.Errorf("deleting an absent key removed %d rows", n64)
		}
		n64, err = f.st.StateDelete(f.ctx, &store.StateDeleteParams{Scope: a, Key: "k0"})
		must(t, err, "delete k0")
		if n64 != 1 || len(f.stateKeys(p)) != 4 {
			t.Errorf("delete of k0 removed %d rows, left %v", n64, f.stateKeys(p))
		}
		n64, err = f.st.StateDelete(f.ctx, &store.StateDeleteParams{Scope: a})
		must(t, err, "clear a")
		if n64 != 4 || len(f.stateKeys(p)) != 0 {
			t.Errorf("clear of a removed %d rows, left %v", n64, f.stateKeys(p))
		}
		if _, err := f.st.StateGet(f.ctx, b, "k0"); err != nil {
			t.Errorf("clear of a took scope b's key: %v", err)
		}
	})
}
