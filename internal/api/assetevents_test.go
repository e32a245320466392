package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

// docs/requirements.md#e-7: an external system posts an event with the fields a running
// task may emit; a repeated idempotency key returns the first event with
// duplicate true and creates nothing (nor an audit entry); bad fields are
// refused with nothing created; events filter by partition and show the
// posting user as their source.
func TestCreateAssetEventFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.syncAssetDag(core.DAG{DagID: "prod", Assets: []core.Asset{{Name: "orders", URI: "s3://o"}, {Name: "raw", URI: "s3://r"}},
		Tasks: []core.Task{{TaskID: "load", Operator: "noop", Outlets: []core.AssetRef{{Name: "orders"}}}}})
	var list api.AssetCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets", nil, &list)
	orders, raw := itoa(list.Assets[0].ID), itoa(list.Assets[1].ID)
	body := map[string]any{"asset_id": list.Assets[0].ID, "partition_key": "2026-03-01", "partition_date": "2026-03-01T00:00:00+01:00",
		"extra": map[string]any{"rows": 3, "token": "abc"}, "idempotency_key": "upstream/orders/2026-03-01"}
	var first, again api.CreatedAssetEvent
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/assets/events", body, &first)
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/assets/events", body, &again)
	if first.Duplicate || *first.PartitionKey != "2026-03-01" || first.PartitionDate.UTC().Hour() != 23 ||
		first.SourceKind != core.AssetSourceAPI || first.SourceUser != "op" || string(first.Extra) != `{"rows":3,"token":"***"}` {
		t.Errorf("created: %+v, want partition 2026-03-01 dated 23:00 UTC, posted by op, token masked", first)
	}
	if !again.Duplicate || again.ID != first.ID {
		t.Errorf("repeat: %+v, want event %d with duplicate true", again, first.ID)
	}

	// A key names one event of its asset: another asset's is its own.
	body["asset_id"] = list.Assets[1].ID
	var other api.CreatedAssetEvent
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/assets/events", body, &other)
	if other.Duplicate || other.ID == first.ID || other.AssetID != list.Assets[1].ID {
		t.Errorf("the same key on another asset: %+v, want a new event of asset %d", other, list.Assets[1].ID)
	}
	for _, bad := range []struct {
		body   map[string]any
		status int
		want   string
	}{
		{map[string]any{"asset_id": list.Assets[0].ID, "partition_date": "2026-03-01T00:00:00Z"}, http.StatusBadRequest, `needs a "partition_key"`},
		{map[string]any{"asset_id": list.Assets[0].ID, "partition_key": "p", "partition_date": "2026-03-01"}, http.StatusBadRequest, "with a zone offset"},
		{map[string]any{"asset_id": list.Assets[0].ID, "extra": map[string]any{"blob": strings.Repeat("x", 20000)}},
			http.StatusRequestEntityTooLarge, "more than the 16384 allowed"},
		{map[string]any{"asset_id": list.Assets[0].ID, "idempotency_key": ""}, http.StatusBadRequest, `"idempotency_key" must not be empty`},
	} {
		e.mustProblem(bad.status, core.RoleOp, "POST", "/api/v2/assets/events", bad.body, bad.want)
	}
	if n := len(e.audit()); n != 2 {
		t.Errorf("%d audit entries, want 2 (the two events): the repeat and the refusals record none", n)
	}
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/assets/events", map[string]any{"asset_id": list.Assets[0].ID}, nil)
	var events api.AssetEventCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets/events?asset_id="+orders+"&partition_key=2026-03-01", nil, &events)
	if events.TotalEntries != 1 || events.AssetEvents[0].ID != first.ID || events.AssetEvents[0].IdempotencyKey != "upstream/orders/2026-03-01" {
		t.Errorf("events of partition 2026-03-01: %+v, want the first one only", events)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets/events?asset_id="+raw, nil, &events)
	if events.TotalEntries != 1 || events.AssetEvents[0].ID != other.ID {
		t.Errorf("events of raw: %+v, want the one its own use of the key made", events)
	}
}
