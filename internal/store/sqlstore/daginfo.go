package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// The queries behind the REST API's dagVersions and dagStats.
const (
	qDagVersionList     = `SELECT id, dag_id, version_number, hash, created_at FROM dag_version%s%s%s`
	qDagVersionCount    = `SELECT COUNT(*) FROM dag_version%s`
	qDagVersionByNumber = `SELECT ` + qDagVersionCols + ` FROM dag_version WHERE dag_id = $1 AND version_number = $2`
	// qDagRunStateCounts: %s is the IN list of dag ids.
	qDagRunStateCounts = `SELECT dag_id, state, COUNT(*) FROM dag_run WHERE dag_id IN (%s) GROUP BY dag_id, state`
)

var dagVersionOrder = orderSpec{order: store.DagVersionOrder, def: "version_number", key: []string{"version_number"},
	cols: map[string]string{"version_number": "version_number", "id": "id", "created_at": "created_at"}}

// DagVersionList lists a page of a DAG's versions, without specs.
func (s *Store) DagVersionList(ctx context.Context, p *store.DagVersionListParams) ([]core.DagVersion, error) {
	return listPage(ctx, s, "list dag versions", qDagVersionList, dagVersionFilter(p), &dagVersionOrder, p.Page,
		func(r scanner) (*core.DagVersion, error) {
			var (
				v       core.DagVersion
				created int64
			)
			if err := r.Scan(&v.ID, &v.DagID, &v.Version, &v.Hash, &created); err != nil {
				return nil, err
			}
			v.CreatedAt = fromMicros(created)
			return &v, nil
		})
}

// DagVersionCount counts a DAG's versions.
func (s *Store) DagVersionCount(ctx context.Context, p *store.DagVersionListParams) (int, error) {
	return s.count(ctx, "count dag versions", qDagVersionCount, dagVersionFilter(p))
}

func dagVersionFilter(p *store.DagVersionListParams) *builder {
	var b builder
	b.where("dag_id = ?", p.DagID)
	return &b
}

// DagVersionByNumber returns one version of a DAG.
func (s *Store) DagVersionByNumber(ctx context.Context, dagID string, number int) (*core.DagVersion, error) {
	v, err := scanVersion(s.reader().QueryRowContext(ctx, qDagVersionByNumber, dagID, number))
	if err != nil {
		return nil, s.wrap(err, "get version %d of dag %s", number, dagID)
	}
	return v, nil
}

// DagRunStateCounts counts runs per DAG and state in one query.
func (s *Store) DagRunStateCounts(ctx context.Context, dagIDs []string) (map[string]map[core.DagRunState]int, error) {
	out := map[string]map[core.DagRunState]int{}
	if len(dagIDs) == 0 {
		return out, nil
	}
	var b builder
	rows, err := s.reader().QueryContext(ctx, fmt.Sprintf(qDagRunStateCounts, list(&b, dagIDs)), b.args...)
	if err != nil {
		return nil, s.wrap(err, "count runs per dag and state")
	}
	_, err = collect(rows, func(r *sql.Rows) (struct{}, error) {
		var (
			dagID, state string
			n            int
		)
		err := r.Scan(&dagID, &state, &n)
		if out[dagID] == nil {
			out[dagID] = map[core.DagRunState]int{}
		}
		out[dagID][core.DagRunState(state)] = n
		return struct{}{}, err
	})
	return out, s.wrap(err, "count runs per dag and state")
}
