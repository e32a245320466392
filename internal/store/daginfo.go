package store

import (
	"context"

	"github.com/weirflow/weir/internal/core"
)

// DagInfoStore reads what the REST API's dagVersions and dagStats show.
type DagInfoStore interface {
	// DagVersionList lists a DAG's versions without their specs
	// (store.DagVersionOrder); DagVersionCount counts them.
	DagVersionList(ctx context.Context, p *DagVersionListParams) ([]core.DagVersion, error)
	DagVersionCount(ctx context.Context, p *DagVersionListParams) (int, error)
	// DagVersionByNumber returns one version of a DAG (with its spec), or
	// ErrNotFound.
	DagVersionByNumber(ctx context.Context, dagID string, number int) (*core.DagVersion, error)
	// DagRunStateCounts counts the runs of each of dagIDs per state, in
	// one query; a DAG with no run is absent.
	DagRunStateCounts(ctx context.Context, dagIDs []string) (map[string]map[core.DagRunState]int, error)
}

// DagVersionListParams selects and pages DagVersionList.
type DagVersionListParams struct {
	DagID string
	Page
}

// DagVersionOrder is how DAG versions may be ordered.
var DagVersionOrder = Order{List: "DAG versions", Default: "version_number (oldest first)",
	Fields: []string{"version_number", "id", "created_at"}}
