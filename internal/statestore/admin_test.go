package statestore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/statevalue"
	"github.com/weirflow/weir/internal/store"
)

// auditLog returns the audit log as "user action target detail", oldest first.
func auditLog(t *testing.T, st store.Store) []string {
	t.Helper()
	entries, err := st.AuditLogList(context.Background(), &store.AuditLogListParams{})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		out = append(out, fmt.Sprintf("%s %s %s %s", e.User, e.Action, e.Target, e.Detail))
	}
	return out
}

// An admin's clear of an asset's state keeps its watchers' cursors: a
// clear would make every watcher report everything again (a cursor is
// reset on its own, audited).
func TestAdminClearOfAnAssetKeepsItsWatchersCursors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, st, _ := newService(t, statestore.Config{})
	defineAssets(t, st, orders)
	ada := core.Actor{Name: "ada", Role: core.RoleOp}
	asset, err := svc.Resolve(ctx, core.AssetScopeByName("orders"))
	if err != nil {
		t.Fatal(err)
	}
	cursor := core.WatcherCursorKey("landing")
	if err := st.StateSet(ctx, &store.StateSetParams{Scope: asset, Key: cursor, Value: json.RawMessage(`{"id": 7}`), Now: t0,
		By: core.StateWriter{Kind: core.StateWriterWatcher, Watcher: "landing"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AdminSet(ctx, ada, asset, "k", []byte(`1`), statevalue.Retention{}); err != nil {
		t.Fatal(err)
	}
	if err := svc.AdminClear(ctx, ada, asset, false); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, asset, "k"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("k after the clear: %v, want it gone", err)
	}
	if e, err := svc.Get(ctx, asset, cursor); err != nil || string(e.Value) != `{"id": 7}` {
		t.Errorf("the watcher's cursor after the clear: %+v, %v; want it kept", e, err)
	}
}

// An admin edit of either kind is authorized, changes state, and leaves one
// audit entry naming the actor, the action, the scope and the key; the
// write records the actor as its writer (docs/task-state.md,
// docs/asset-state.md).
func TestAdminEditsAreAuditedForEveryKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, st, _ := newService(t, statestore.Config{})
	defineAssets(t, st, orders)
	ada := core.Actor{Name: "ada", Role: core.RoleOp}
	asset := core.AssetScopeByName("orders")
	e, err := svc.AdminSet(ctx, ada, sc, "k", []byte(`1`), retention(t, "never"))
	if err != nil || !e.NeverExpire || e.UpdatedBy != core.UserWriter("ada") {
		t.Fatalf("admin set of task state = %+v, %v", e, err)
	}
	e, err = svc.AdminSet(ctx, ada, asset, "k", []byte(`{"n": 2}`), statevalue.Retention{})
	if err != nil || string(e.Value) != `{"n":2}` || e.Scope.AssetID == 0 || e.UpdatedBy != core.UserWriter("ada") {
		t.Fatalf("admin set of asset state = %+v, %v", e, err)
	}
	if got, err := svc.Get(ctx, asset, "k"); err != nil || got.UpdatedBy.User != "ada" {
		t.Errorf("asset state written by the admin reads back as %+v, %v", got, err)
	}
	for _, scope := range []core.StateScope{sc, asset} {
		if err := svc.AdminDelete(ctx, ada, scope, "k"); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Get(ctx, scope, "k"); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("%s: after admin delete: %v", scope, err)
		}
		if err := svc.AdminClear(ctx, ada, scope, false); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"ada task_state.set d/r1/t key=k retention=never",
		"ada asset_state.set orders key=k",
		"ada task_state.delete d/r1/t key=k",
		"ada task_state.clear d/r1/t all_map_indices=false",
		"ada asset_state.delete orders key=k",
		"ada asset_state.clear orders ",
	}
	if diff := cmp.Diff(want, auditLog(t, st)); diff != "" {
		t.Errorf("audit log (-want +got):\n%s", diff)
	}
}

// A refused admin edit (a viewer, an unknown task instance or asset, a bad
// value) changes nothing and leaves no audit entry.
func TestAdminEditRefusedChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, st, _ := newService(t, statestore.Config{})
	ada := core.Actor{Name: "ada", Role: core.RoleOp}
	viewer := core.Actor{Name: "vic", Role: core.RoleViewer}
	if _, err := svc.Set(ctx, sc, "keep", []byte(`1`), statevalue.Retention{}, core.UserWriter("")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		err   error
		scope core.StateScope
		actor core.Actor
		value string
	}{
		{"viewer", core.ErrForbidden, sc, viewer, `1`},
		{"unknown task instance", core.ErrNotFound, core.TaskScope("d", "r1", "nope", -1), ada, `1`},
		{"unknown asset", core.ErrNotFound, core.AssetScopeByName("nope"), ada, `1`},
		{"null", core.ErrInvalid, sc, ada, `null`},
	} {
		if _, err := svc.AdminSet(ctx, c.actor, c.scope, "k", []byte(c.value), statevalue.Retention{}); !errors.Is(err, c.err) {
			t.Errorf("%s: set: %v, want %v", c.name, err, c.err)
		}
		if c.value != `1` {
			continue // a clear has no value to refuse
		}
		if err := svc.AdminClear(ctx, c.actor, c.scope, true); !errors.Is(err, c.err) {
			t.Errorf("%s: clear: %v, want %v", c.name, err, c.err)
		}
	}
	if _, err := svc.Get(ctx, sc, "k"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("a refused edit wrote: %v", err)
	}
	if _, err := svc.Get(ctx, sc, "keep"); err != nil {
		t.Errorf("a refused clear deleted: %v", err)
	}
	if got := auditLog(t, st); len(got) != 0 {
		t.Errorf("refused edits were audited: %v", got)
	}
}

// List pages in the database and counts the total only when the page does
// not already tell it.
func TestListPagesWithTotal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, _, _ := newService(t, statestore.Config{})
	for i := range 7 {
		if _, err := svc.Set(ctx, sc, fmt.Sprintf("k%d", i), []byte(`1`), statevalue.Retention{}, core.UserWriter("")); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		page      store.Page
		wantFirst string
		wantLen   int
	}{
		{store.Page{Limit: 3}, "k0", 3},
		{store.Page{Limit: 3, Offset: 6}, "k6", 1},
		{store.Page{Limit: 3, Offset: 9}, "", 0},
		{store.Page{Limit: 3, OrderBy: "-key"}, "k6", 3},
		{store.Page{}, "k0", 7},
	} {
		rows, total, err := svc.List(ctx, &store.StateListParams{Kind: core.StateTask, DagID: "d", Page: c.page})
		if err != nil {
			t.Fatal(err)
		}
		if total != 7 || len(rows) != c.wantLen || (c.wantLen > 0 && rows[0].Key != c.wantFirst) {
			t.Errorf("page %+v: %d rows from %q, total %d; want %d from %q, total 7", c.page, len(rows), firstKey(rows), total, c.wantLen, c.wantFirst)
		}
	}
}

func firstKey(rows []core.StateEntry) string {
	if len(rows) == 0 {
		return ""
	}
	return rows[0].Key
}
