package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

// docs/requirements.md#as-1, #as-3, #as-6 and the audit log: the REST API lists an asset's
// keys with who last wrote them, reads, writes (op or admin, recorded as
// the user), deletes and clears them; every change is audited; bad input
// (a retention, null, NaN, too large) is refused and changes nothing.
func TestAssetStateREST(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.syncAssetDag(core.DAG{DagID: "prod", Assets: []core.Asset{{Name: "orders", URI: "s3://lake/orders"}},
		Tasks: []core.Task{{TaskID: "load", Operator: "noop", Outlets: []core.AssetRef{{Name: "orders"}}}}})
	var assets api.AssetCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets", nil, &assets)
	base := fmt.Sprintf("/api/v2/assets/%d/state-store", assets.Assets[0].ID)

	var list api.StateCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", base, nil, &list)
	if list.TotalEntries != 0 {
		t.Fatalf("empty list = %+v", list)
	}
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "PUT", base+"/k", map[string]any{"value": 1})

	var got core.StateEntry
	e.must(http.StatusOK, core.RoleOp, "PUT", base+"/watermark", `{"value": {"last_id": 12}}`, &got)
	if string(got.Value) != `{"last_id":12}` || got.UpdatedBy.Kind != "user" || got.UpdatedBy.User != "op" || got.Scope.AssetName != "orders" ||
		!got.UpdatedAt.Equal(e.clk.Now()) {
		t.Errorf("PUT answer = %+v, want the value written by user op", got)
	}
	if !e.hasAudit("op", "asset_state.set", "orders") {
		t.Errorf("audit log lacks the set: %+v", e.audit())
	}
	e.must(http.StatusOK, core.RoleAdmin, "PUT", base+"/n", `{"value": 7}`, nil)
	e.must(http.StatusOK, core.RoleViewer, "GET", base, nil, &list)
	if list.TotalEntries != 2 || list.Entries[0].Key != "n" || list.Entries[0].UpdatedBy.User != "admin" ||
		list.Entries[1].Key != "watermark" || list.Entries[1].UpdatedBy.Kind != "user" {
		t.Errorf("list = %+v", list)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", base+"/watermark", nil, &got)
	if string(got.Value) != `{"last_id":12}` {
		t.Errorf("GET watermark = %s", got.Value)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", base+"/absent", nil, `no asset state key "absent" for asset "orders"`)
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/assets/99999/state-store", nil, "asset id 99999")

	before := len(e.audit())
	for body, want := range map[string]string{
		`{"value": null}`:                 "null cannot be stored",
		`{"value": NaN}`:                  "NaN or Infinity",
		`{"value": 1, "retention": "6h"}`: "asset state has no retention",
	} {
		e.mustProblem(http.StatusBadRequest, core.RoleOp, "PUT", base+"/watermark", body, want)
	}
	e.mustProblem(http.StatusRequestEntityTooLarge, core.RoleOp, "PUT", base+"/watermark",
		`{"value": "`+strings.Repeat("x", 65536)+`"}`, "over the limit of 65536 bytes ([state_store] max_value_bytes)")
	e.must(http.StatusOK, core.RoleViewer, "GET", base+"/watermark", nil, &got)
	if string(got.Value) != `{"last_id":12}` || len(e.audit()) != before {
		t.Errorf("refused writes changed the value (%s) or the audit log", got.Value)
	}

	e.must(http.StatusNoContent, core.RoleOp, "DELETE", base+"/n", nil, nil)
	e.must(http.StatusNoContent, core.RoleOp, "DELETE", base+"/n", nil, nil) // absent: still fine
	e.must(http.StatusNoContent, core.RoleOp, "DELETE", base, nil, nil)
	e.must(http.StatusOK, core.RoleViewer, "GET", base, nil, &list)
	if list.TotalEntries != 0 || !e.hasAudit("op", "asset_state.delete", "orders") || !e.hasAudit("op", "asset_state.clear", "orders") {
		t.Errorf("after delete and clear: %+v; audit %+v", list, e.audit())
	}
}
