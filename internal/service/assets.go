package service

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// CreateAssetEvent records an event of an asset from outside Weir (a
// person or program through the REST API): consumers scheduled on the
// asset are queued in the same transaction, the entry is audited and the
// scheduler woken. Needs role op. Errors wrap core.ErrNotFound for an
// unknown asset and core.ErrInvalid for extra that is not a JSON object.
func (s *Service) CreateAssetEvent(ctx context.Context, actor core.Actor, assetID int64, extra json.RawMessage) (*core.AssetEvent, error) {
	if assetID <= 0 {
		return nil, fmt.Errorf("asset_id is required (the id shown by GET /api/v2/assets): %w", core.ErrInvalid)
	}
	c := &change{actor: actor, need: core.RoleOp, action: audit.AssetEventCreate, notify: []string{store.ChannelScheduler}}
	var ev *core.AssetEvent
	err := s.do(ctx, c, func(tx store.Store, detail *string) error {
		if _, err := tx.AssetGet(ctx, assetID); err != nil {
			return fmt.Errorf("asset_id %d: %w", assetID, err)
		}
		var err error
		ev, err = tx.AssetEventInsert(ctx, &store.AssetEventParams{AssetID: assetID, Extra: extra,
			SourceKind: core.AssetSourceAPI, Now: s.clock.Now()})
		if err != nil {
			return err
		}
		c.target, *detail = ev.Name, "event "+strconv.FormatInt(ev.ID, 10)+" "+string(ev.Extra)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ev, nil
}
