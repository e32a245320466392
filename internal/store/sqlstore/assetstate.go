package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// knownWriterKinds are the values last_updated_by_kind accepts (SPEC AS-6).
var knownWriterKinds = map[string]bool{store.StateWriterTask: true, store.StateWriterWatcher: true,
	store.StateWriterAPI: true, store.StateWriterUser: true}

// AssetStateSet upserts one key of an asset; ErrNotFound when the asset
// does not exist, ErrInvalid when the value is not JSON or the writer kind
// is unknown.
func (s *Store) AssetStateSet(ctx context.Context, p *store.AssetStateSetParams) error {
	what := fmt.Sprintf("set asset state %q of asset %d", p.Key, p.AssetID)
	if !json.Valid(p.Value) {
		return fmt.Errorf("%s: value is not valid JSON: %w", what, core.ErrInvalid)
	}
	by := p.By
	if !knownWriterKinds[by.Kind] {
		return fmt.Errorf("%s: writer kind %q is not one of task, watcher, api, user: %w", what, by.Kind, core.ErrInvalid)
	}
	return s.execOne(ctx, what, qAssetStateSet, p.AssetID, p.Key, string(p.Value), micros(p.Now), by.Kind,
		by.DagID, by.RunID, by.TaskID, by.MapIndex, by.TryNumber, by.User)
}

// AssetStateGet returns one entry or ErrNotFound.
func (s *Store) AssetStateGet(ctx context.Context, assetID int64, key string) (*store.AssetStateEntry, error) {
	e, err := scanAssetState(s.reader().QueryRowContext(ctx, qAssetStateGet, assetID, key))
	if err != nil {
		return nil, s.wrap(err, "get asset state %q of asset %d", key, assetID)
	}
	return &e, nil
}

// AssetStateList lists an asset's entries by key, or with assetID 0 every
// asset's by asset name and key.
func (s *Store) AssetStateList(ctx context.Context, assetID int64) ([]store.AssetStateEntry, error) {
	if assetID == 0 {
		return s.queryAssetState(ctx, "list asset state", qAssetStateListAll)
	}
	return s.queryAssetState(ctx, fmt.Sprintf("list asset state of asset %d", assetID), qAssetStateList, assetID)
}

// AssetStateDelete deletes one key, or clears the asset when key is "".
func (s *Store) AssetStateDelete(ctx context.Context, assetID int64, key string) (int64, error) {
	var (
		res sql.Result
		err error
	)
	if key != "" {
		res, err = s.writer().ExecContext(ctx, qAssetStateDelete, assetID, key)
	} else {
		res, err = s.writer().ExecContext(ctx, qAssetStateClear, assetID)
	}
	if err != nil {
		return 0, s.wrap(err, "delete asset state of asset %d", assetID)
	}
	n, err := res.RowsAffected()
	return n, s.wrap(err, "delete asset state of asset %d", assetID)
}

// AssetStateOrphans lists up to limit (0 = all) entries of assets inactive
// since before inactiveBefore.
func (s *Store) AssetStateOrphans(ctx context.Context, inactiveBefore time.Time, limit int) ([]store.AssetStateEntry, error) {
	if limit <= 0 {
		limit = 1 << 31
	}
	return s.queryAssetState(ctx, "list orphaned asset state", qAssetStateOrphans, micros(inactiveBefore), limit)
}

// AssetStateDeleteOrphans deletes up to limit (0 = all, one statement)
// entries of assets inactive since before inactiveBefore.
func (s *Store) AssetStateDeleteOrphans(ctx context.Context, inactiveBefore time.Time, limit int) (int64, error) {
	return s.deleteUpTo(ctx, "delete orphaned asset state", qAssetStateDeleteOrphans, qAssetStateDeleteOrphansBatch, inactiveBefore, limit)
}

// queryAssetState runs an asset-state query and scans every row.
func (s *Store) queryAssetState(ctx context.Context, what, query string, args ...any) ([]store.AssetStateEntry, error) {
	return queryAll(ctx, s, what, query, scanAssetState, args...)
}

// scanAssetState reads one row in assetStateCols order.
func scanAssetState(r scanner) (store.AssetStateEntry, error) {
	var (
		e        store.AssetStateEntry
		value    string
		updated  int64
		inactive sql.NullInt64
	)
	b := &e.UpdatedBy
	err := r.Scan(&e.AssetID, &e.AssetName, &e.AssetURI, &e.Key, &value, &updated, &b.Kind, &b.DagID, &b.RunID,
		&b.TaskID, &b.MapIndex, &b.TryNumber, &b.User, &inactive)
	e.Value = json.RawMessage(value)
	e.UpdatedAt = fromMicros(updated)
	e.AssetInactiveSince = ptrMicros(inactive)
	return e, err
}
