package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

// Both state-store lists page in the database with Airflow's limit, offset
// and order_by, answer total_entries for every page, and refuse an unknown
// order_by naming the fields allowed (docs/api.md#state-store).
func TestStateListsPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	e.syncAssetDag(core.DAG{DagID: "prod", Assets: []core.Asset{{Name: "orders", URI: "s3://lake/orders"}},
		Tasks: []core.Task{{TaskID: "load", Operator: "noop", Outlets: []core.AssetRef{{Name: "orders"}}}}})
	var assets api.AssetCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets", nil, &assets)
	for _, base := range []string{
		"/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/state-store",
		fmt.Sprintf("/api/v2/assets/%d/state-store", assets.Assets[0].ID),
	} {
		for i := range 5 {
			e.must(http.StatusOK, core.RoleOp, "PUT", fmt.Sprintf("%s/k%d", base, i), `{"value": 1}`, nil)
		}
		for query, want := range map[string][]string{
			"?limit=2&offset=1":      {"k1", "k2"},
			"?limit=2&order_by=-key": {"k4", "k3"},
			"?offset=4":              {"k4"},
			"?offset=9":              {},
		} {
			var list api.StateCollection
			e.must(http.StatusOK, core.RoleViewer, "GET", base+query, nil, &list)
			got := []string{}
			for _, en := range list.Entries {
				got = append(got, en.Key)
			}
			if list.TotalEntries != 5 || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("GET %s%s = %v of %d, want %v of 5", base, query, got, list.TotalEntries, want)
			}
		}
		e.mustProblem(http.StatusBadRequest, core.RoleViewer, "GET", base+"?order_by=colour", nil,
			`cannot be ordered by "colour"`, "allowed: key, updated_at")
	}
}
