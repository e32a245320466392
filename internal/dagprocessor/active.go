package dagprocessor

import (
	"context"
	"fmt"

	"github.com/weirflow/weir/internal/store"
)

// reconcileActive compares the store's active flags with keep, the dag ids
// this scan defines, so that a wrong flag heals at the next scan whoever set
// it: a defined DAG found inactive is forgotten from synced, so this scan
// records it again (DagSync reactivates it, AssetSync its assets), and so
// is a defined DAG with no row (deleted by `weir dags delete`); extra
// reports an active DAG that keep lacks, which DagDeactivateMissing must
// deactivate. In step, it costs two counts.
func (p *Processor) reconcileActive(ctx context.Context, keep []string) (extra bool, err error) {
	total, err := p.Store.DagCount(ctx, &store.DagListParams{OnlyActive: true})
	if err != nil {
		return false, fmt.Errorf("count active dags: %w", err)
	}
	kept := 0
	if len(keep) > 0 {
		if kept, err = p.Store.DagCount(ctx, &store.DagListParams{OnlyActive: true, DagIDs: keep}); err != nil {
			return false, fmt.Errorf("count active dags: %w", err)
		}
	}
	if kept < len(keep) { // some defined DAG is inactive, or not recorded yet
		dags, err := p.Store.DagList(ctx, &store.DagListParams{DagIDs: keep})
		if err != nil {
			return false, fmt.Errorf("list dags: %w", err)
		}
		recorded := make(map[string]bool, len(dags))
		for _, d := range dags {
			recorded[d.DagID] = true
			if !d.IsActive {
				if _, ok := p.synced[d.DagID]; ok {
					p.logger().Info("dag found inactive although its file defines it; reactivating", "dag_id", d.DagID)
				}
				delete(p.synced, d.DagID)
			}
		}
		for _, id := range keep { // deleted (weir dags delete): record it again
			if !recorded[id] {
				delete(p.synced, id)
			}
		}
	}
	return total > kept, nil
}
