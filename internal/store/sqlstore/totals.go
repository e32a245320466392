package sqlstore

import (
	"context"
	"database/sql"

	"github.com/weirflow/weir/internal/store"
)

// TaskInstanceTotals counts the current tries per queue and state.
func (s *Store) TaskInstanceTotals(ctx context.Context) ([]store.TaskInstanceTotal, error) {
	rows, err := s.reader().QueryContext(ctx, qTITotals)
	if err != nil {
		return nil, s.wrap(err, "count task instances per queue and state")
	}
	out, err := collect(rows, func(r *sql.Rows) (store.TaskInstanceTotal, error) {
		var t store.TaskInstanceTotal
		err := r.Scan(&t.Queue, &t.State, &t.Count)
		return t, err
	})
	return out, s.wrap(err, "count task instances per queue and state")
}
