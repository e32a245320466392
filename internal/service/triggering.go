package service

import (
	"context"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// MaxTriggeringPage is the most asset events one page of a run's
// triggering events holds (what a try's run context carries too).
const MaxTriggeringPage = 1000

// TriggeringEvents returns a page of the asset events that created ti's
// run, oldest first: those after event id after (0 = from the first), at
// most limit (1 to MaxTriggeringPage; 0 = the most), and how many the run
// consumed in all. A run not created by asset events has none.
func (s *Service) TriggeringEvents(ctx context.Context, ti *core.TaskInstance, after int64, limit int) ([]core.AssetEvent, int, error) {
	if limit == 0 {
		limit = MaxTriggeringPage
	}
	if limit < 0 || limit > MaxTriggeringPage || after < 0 {
		return nil, 0, fmt.Errorf("triggering asset events: limit must be 1 to %d and after an event id (0 or more), got limit %d after %d: %w",
			MaxTriggeringPage, limit, after, core.ErrInvalid)
	}
	p := &store.AssetEventListParams{ConsumedByRunID: ti.DagRunID, Cursor: store.Cursor{AfterID: after}, Page: store.Page{Limit: limit}}
	events, err := s.st.AssetEventList(ctx, p)
	if err != nil {
		return nil, 0, fmt.Errorf("list the asset events of dag run %s/%s: %w", ti.DagID, ti.RunID, err)
	}
	total, err := s.st.AssetEventCount(ctx, &store.AssetEventListParams{ConsumedByRunID: ti.DagRunID})
	if err != nil {
		return nil, 0, fmt.Errorf("count the asset events of dag run %s/%s: %w", ti.DagID, ti.RunID, err)
	}
	return events, total, nil
}
