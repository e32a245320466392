package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// TestWatchersShowHealthAndCursorEdits: an asset's watchers show their
// trigger (masked), triggerer, health and cursor; an op sets and resets a
// cursor (audited), a viewer may not, and an unknown watcher is 404
// naming the asset's watchers.
func TestWatchersShowHealthAndCursorEdits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	orders := core.Asset{Name: "orders", URI: "s3://lake/orders", Watchers: []core.AssetWatcher{{Name: "landing",
		Trigger: core.TriggerSpec{Type: "s3_keys", Kwargs: json.RawMessage(`{"bucket":"lake","endpoint":"https://k:hunter2@minio:9000"}`)}}}}
	e.syncAssetDag(core.DAG{DagID: "watched", Assets: []core.Asset{orders}, AssetSchedule: []core.AssetRef{{Name: "orders"}},
		Tasks: []core.Task{{TaskID: "load", Operator: "noop"}}})
	a, err := e.st.AssetGetByName(t.Context(), "orders")
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := e.st.WatcherList(t.Context(), &store.WatcherListParams{AssetID: a.ID})
	if _, err := e.st.WatcherCommit(t.Context(), &store.WatcherCommitParams{TriggerID: ws[0].TriggerID, TriggererID: "t1",
		Now: e.clk.Now()}); err == nil {
		t.Fatal("a triggerer that does not hold the trigger committed")
	}
	base := fmt.Sprintf("/api/v2/assets/%d/watchers", a.ID)
	var list api.WatcherCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", base, nil, &list)
	if list.TotalEntries != 1 || list.Watchers[0].Name != "landing" || list.Watchers[0].Trigger.Type != "s3_keys" ||
		strings.Contains(string(list.Watchers[0].Trigger.Kwargs), "hunter2") || string(list.Watchers[0].Cursor) != "null" ||
		list.Watchers[0].TriggererAlive {
		t.Fatalf("watchers = %+v, want landing with masked kwargs, no cursor, no live triggerer", list)
	}

	var w core.Watcher
	e.must(http.StatusOK, core.RoleOp, "PUT", base+"/landing/cursor", map[string]any{"value": map[string]any{"modified": "2026-05-01T00:00:00Z", "key": "k7"}}, &w)
	if string(w.Cursor) != `{"key":"k7","modified":"2026-05-01T00:00:00Z"}` {
		t.Errorf("cursor after PUT = %s", w.Cursor)
	}
	// A cursor every poll would refuse is refused at once, naming the shape.
	for _, bad := range []any{"garbage", map[string]any{"after": "k7"}, map[string]any{"modified": "yesterday"}} {
		e.mustProblem(http.StatusBadRequest, core.RoleOp, "PUT", base+"/landing/cursor", map[string]any{"value": bad}, `is not {"modified": "<RFC 3339 time>"`)
	}
	// So is one set through the asset-state routes (the asset page's panel
	// writes through them too); another key under watcher/ is not a cursor.
	stateKey := fmt.Sprintf("/api/v2/assets/%d/state-store/watcher%%2Flanding%%2Fcursor", a.ID)
	e.mustProblem(http.StatusBadRequest, core.RoleOp, "PUT", stateKey, map[string]any{"value": "garbage"}, `is not {"modified": "<RFC 3339 time>"`)
	e.must(http.StatusOK, core.RoleOp, "PUT", fmt.Sprintf("/api/v2/assets/%d/state-store/watcher%%2Fnotes", a.ID), map[string]any{"value": "garbage"}, nil)
	e.must(http.StatusOK, core.RoleViewer, "GET", base, nil, &list)
	if got := string(list.Watchers[0].Cursor); got != `{"key":"k7","modified":"2026-05-01T00:00:00Z"}` {
		t.Errorf("cursor after the refused edits = %s, want the last one set", got)
	}
	if !e.hasAudit("op", audit.AssetStateSet, "orders") {
		t.Errorf("setting a cursor is not audited: %+v", e.audit())
	}
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "PUT", base+"/landing/cursor", map[string]any{"value": 1})
	e.mustProblem(http.StatusBadRequest, core.RoleOp, "PUT", base+"/landing/cursor", map[string]any{"value": nil}, "DELETE the cursor")
	e.mustProblem(http.StatusNotFound, core.RoleOp, "PUT", base+"/nope/cursor", map[string]any{"value": 1}, `no watcher "nope"`, "landing")
	e.must(http.StatusOK, core.RoleOp, "DELETE", base+"/landing/cursor", nil, &w)
	if string(w.Cursor) != "null" {
		t.Errorf("cursor after reset = %s, want none (null)", w.Cursor)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/assets/999/watchers", nil)
}
