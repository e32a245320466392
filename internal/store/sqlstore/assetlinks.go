package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/weirflow/weir/internal/store"
)

// AssetLinks returns how active DAGs use the assets, in one query.
func (s *Store) AssetLinks(ctx context.Context, assetIDs []int64) ([]store.AssetLink, error) {
	if len(assetIDs) == 0 {
		return nil, nil
	}
	var b builder
	rows, err := s.reader().QueryContext(ctx, fmt.Sprintf(qAssetLinks, ints(&b, assetIDs)), b.args...)
	if err != nil {
		return nil, s.wrap(err, "asset links")
	}
	out, err := collect(rows, func(r *sql.Rows) (store.AssetLink, error) {
		var l store.AssetLink
		return l, r.Scan(&l.AssetID, &l.Kind, &l.DagID, &l.TaskID)
	})
	return out, s.wrap(err, "asset links")
}
