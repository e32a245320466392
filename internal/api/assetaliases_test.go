package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func TestAssetAliasesListAndGet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	exports := []core.Asset{{Name: "export_a", URI: "file:///exports/a.csv"}, {Name: "export_b", URI: "file:///exports/b.csv"}}
	e.syncAssetDag(core.DAG{DagID: "prod", Assets: exports, Tasks: []core.Task{{TaskID: "export", Operator: "noop",
		Outlets: []core.AssetRef{{Alias: "exports"}, {Alias: "team/daily"}, {Alias: "unused"}}}}})
	declared := e.clk.Now()

	// A task's success records one event per added asset, associating its aliases.
	event := func(asset string, aliases ...string) {
		t.Helper()
		if _, err := e.st.AssetEventInsert(t.Context(), &store.AssetEventParams{AssetName: asset, SourceKind: core.AssetSourceAPI,
			Aliases: aliases, Now: e.clk.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	e.clk.Advance(time.Minute)
	event("export_b", "exports", "team/daily")
	e.clk.Advance(time.Minute)
	event("export_a", "exports")
	e.clk.Advance(time.Minute)
	event("export_b", "exports")

	var list api.AssetAliasCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets/aliases", nil, &list)
	var names []string
	for _, a := range list.AssetAliases {
		names = append(names, a.Name)
	}
	if list.TotalEntries != 3 || len(names) != 3 || names[0] != "exports" || names[1] != "team/daily" || names[2] != "unused" {
		t.Fatalf("aliases: %+v, want exports, team/daily, unused by name", list)
	}
	if u := list.AssetAliases[2]; u.Assets == nil || len(u.Assets) != 0 || !u.CreatedAt.Equal(declared) {
		t.Errorf("unused: %+v, want no assets (an empty list) and created when its DAG was parsed", u)
	}
	start := declared
	ex := list.AssetAliases[0].Assets
	if len(ex) != 2 || ex[0].Name != "export_a" || ex[1].Name != "export_b" || ex[1].URI != "file:///exports/b.csv" ||
		!ex[1].Active || !ex[1].FirstAssociatedAt.Equal(start.Add(time.Minute)) || !ex[1].LastAssociatedAt.Equal(start.Add(3*time.Minute)) ||
		!ex[0].FirstAssociatedAt.Equal(start.Add(2*time.Minute)) {
		t.Errorf("exports resolves to %+v, want export_a (first at +2m) and export_b (first +1m, last +3m)", ex)
	}

	// Paging like the other lists: total_entries counts every alias.
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets/aliases?limit=1&offset=1", nil, &list)
	if list.TotalEntries != 3 || len(list.AssetAliases) != 1 || list.AssetAliases[0].Name != "team/daily" {
		t.Errorf("page 2 of 1: %+v, want team/daily of 3", list)
	}

	var one store.AssetAlias
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets/aliases/team%2Fdaily", nil, &one)
	if one.Name != "team/daily" || len(one.Assets) != 1 || one.Assets[0].Name != "export_b" {
		t.Errorf("team/daily: %+v, want it resolving to export_b", one)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/assets/aliases/nope", nil,
		`asset alias "nope"`, "no DAG declares it", "GET /api/v2/assets/aliases")
	e.mustProblem(http.StatusUnauthorized, core.RolePublic, "GET", "/api/v2/assets/aliases", nil)
}

// An alias may be named like an asset sub-resource: /assets/aliases/X is
// always the alias, /assets/{id}/state-store the asset's state.
func TestAssetAliasRoutesBesideAssetState(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.syncAssetDag(core.DAG{DagID: "prod", Assets: []core.Asset{{Name: "orders", URI: "s3://lake/orders"}},
		Tasks: []core.Task{{TaskID: "load", Operator: "noop", Outlets: []core.AssetRef{{Name: "orders"}, {Alias: "state-store"}}}}})
	var one store.AssetAlias
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets/aliases/state-store", nil, &one)
	if one.Name != "state-store" {
		t.Errorf("GET /assets/aliases/state-store = %+v, want the alias state-store", one)
	}
	var list api.AssetCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets", nil, &list)
	status, body := e.call(core.RoleViewer, "GET", "/api/v2/assets/"+itoa(list.Assets[0].ID)+"/state-store", nil)
	if status != http.StatusOK {
		t.Errorf("asset state list: status %d, body %s", status, body)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/assets/1/nothing-here", nil, "no API route")
}
