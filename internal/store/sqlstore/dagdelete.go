package sqlstore

import "context"

// qDagDelete removes a DAG; every table holding its metadata references
// dag (or dag_run) ON DELETE CASCADE, and state rows hand their objects
// to the state_object sweep as they go.
const qDagDelete = `DELETE FROM dag WHERE dag_id = $1`

// DagDelete removes a DAG and, by cascade, its history.
func (s *Store) DagDelete(ctx context.Context, dagID string) error {
	return s.execOne(ctx, "delete dag "+dagID, qDagDelete, dagID)
}
