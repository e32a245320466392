package sqlstore

import (
	"context"
	"fmt"
)

// qDagDelete removes a DAG; every table holding its metadata references
// dag (or dag_run) ON DELETE CASCADE, and state rows hand their objects
// to the state_object sweep as they go.
const (
	qDagDelete    = `DELETE FROM dag WHERE dag_id = $1`
	qDagRunDelete = `DELETE FROM dag_run WHERE id = $1`
)

// DagDelete removes a DAG and, by cascade, its history.
func (s *Store) DagDelete(ctx context.Context, dagID string) error {
	return s.execOne(ctx, "delete dag "+dagID, qDagDelete, dagID)
}

// DagRunDelete removes a run and, by cascade, its history.
func (s *Store) DagRunDelete(ctx context.Context, id int64) error {
	return s.execOne(ctx, fmt.Sprintf("delete dag run %d", id), qDagRunDelete, id)
}
