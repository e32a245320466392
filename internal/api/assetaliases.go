package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// AssetAliasCollection is a page of asset aliases, by name.
type AssetAliasCollection struct {
	AssetAliases []store.AssetAlias `json:"asset_aliases"`
	TotalEntries int                `json:"total_entries"`
}

type assetAliasInput struct {
	AliasName string `path:"alias_name" doc:"alias name, as in a DAG's {alias: name}"`
}

func (s *server) registerAssetAliases() {
	tags := []string{"Asset"}
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_asset_aliases", Method: http.MethodGet, Path: Prefix + "/assets/aliases", Tags: tags,
		Summary: "List asset aliases",
		Description: listDoc("Lists asset aliases, each with the assets it resolves to and when it was first and last associated with each.",
			store.AssetAliasOrder),
		Errors: []int{http.StatusBadRequest},
	}, s.listAssetAliases)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_asset_alias", Method: http.MethodGet, Path: Prefix + "/assets/aliases/{alias_name}", Tags: tags,
		Summary: "Get an asset alias", Description: "An asset alias with the assets it resolves to.",
		Errors: []int{http.StatusNotFound},
	}, s.getAssetAlias)
}

func (s *server) listAssetAliases(ctx context.Context, in *Page) (*struct{ Body AssetAliasCollection }, error) {
	list, total, err := listOf(ctx, s, &store.AssetAliasListParams{Page: in.store()}, s.st.AssetAliasList, s.st.AssetAliasCount)
	if err != nil {
		return nil, err
	}
	return &struct{ Body AssetAliasCollection }{AssetAliasCollection{AssetAliases: list, TotalEntries: total}}, nil
}

func (s *server) getAssetAlias(ctx context.Context, in *assetAliasInput) (*struct{ Body store.AssetAlias }, error) {
	a, err := s.st.AssetAliasGet(ctx, in.AliasName)
	if err != nil {
		return nil, s.problem(ctx, fmt.Errorf("%w (GET %s/assets/aliases lists the known aliases)", err, Prefix))
	}
	return &struct{ Body store.AssetAlias }{*a}, nil
}

// Two routes net/http.ServeMux refuses side by side: both match
// /assets/aliases/state-store and neither is more specific.
const (
	aliasGetPattern      = "GET " + Prefix + "/assets/aliases/{alias_name}"
	assetStateGetPattern = "GET " + Prefix + "/assets/{asset_id}/state-store"
)

// routeMux is the ServeMux the API registers on, except that it serves
// aliasGetPattern and assetStateGetPattern through one pattern,
// GET /assets/{asset_id}/{part}, that dispatches: the segment "aliases"
// (never an asset id, which is a number) selects the alias, "state-store"
// the asset's state; anything else goes to fallback.
type routeMux struct {
	*http.ServeMux
	fallback          http.HandlerFunc
	alias, assetState func(http.ResponseWriter, *http.Request)
}

// HandleFunc registers pattern, keeping the two conflicting routes aside
// until both are known.
func (m *routeMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	switch pattern {
	case aliasGetPattern:
		m.alias = h
	case assetStateGetPattern:
		m.assetState = h
	default:
		m.ServeMux.HandleFunc(pattern, h)
		return
	}
	if m.alias != nil && m.assetState != nil {
		m.ServeMux.HandleFunc("GET "+Prefix+"/assets/{asset_id}/{part}", m.dispatch)
	}
}

func (m *routeMux) dispatch(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.PathValue("asset_id") == "aliases":
		r.SetPathValue("alias_name", r.PathValue("part"))
		m.alias(w, r)
	case r.PathValue("part") == "state-store":
		m.assetState(w, r)
	default:
		m.fallback(w, r)
	}
}
