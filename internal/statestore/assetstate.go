package statestore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// String names the scope's asset in messages: by name, uri or id.
func (as AssetScope) String() string {
	switch {
	case as.Name != "":
		return strconv.Quote(as.Name)
	case as.URI != "":
		return "with uri " + strconv.Quote(as.URI)
	}
	return "id " + strconv.FormatInt(as.AssetID, 10)
}

// TaskWriter is the provenance of a write by a running task try (SPEC AS-6).
func TaskWriter(ti *core.TaskInstance) Writer {
	return Writer{Kind: store.StateWriterTask, DagID: ti.DagID, RunID: ti.RunID, TaskID: ti.TaskID,
		MapIndex: ti.MapIndex, TryNumber: ti.TryNumber}
}

// UserWriter is the provenance of a write by a user through the REST API or
// the admin CLI (SPEC AS-6).
func UserWriter(username string) Writer {
	return Writer{Kind: store.StateWriterUser, MapIndex: core.NoMapIndex, User: username}
}

// provenance is the writer as the store records it; a writer without a kind
// is a task try when it names a run, a user otherwise.
func (w Writer) provenance() store.StateWriter {
	p := store.StateWriter{Kind: w.Kind, DagID: w.DagID, RunID: w.RunID, TaskID: w.TaskID, MapIndex: w.MapIndex,
		TryNumber: w.TryNumber, User: w.User}
	if p.Kind == "" {
		p.Kind = store.StateWriterUser
		if w.RunID != "" {
			p.Kind = store.StateWriterTask
		}
	}
	return p
}

// writerOf converts a stored provenance back.
func writerOf(p store.StateWriter) Writer {
	return Writer{Kind: p.Kind, DagID: p.DagID, RunID: p.RunID, TaskID: p.TaskID, MapIndex: p.MapIndex,
		TryNumber: p.TryNumber, User: p.User}
}

// ResolveAsset returns the asset scope names (by id, name or URI); an error
// wrapping core.ErrNotFound when there is none. It does not care whether
// the asset is active: callers that do (the Execution API) check.
func (s *Service) ResolveAsset(ctx context.Context, scope AssetScope) (*core.AssetModel, error) {
	return resolveAsset(ctx, s.st, scope)
}

// AssetList returns an asset's state entries with their metadata, by key.
func (s *Service) AssetList(ctx context.Context, assetID int64) ([]store.AssetStateEntry, error) {
	return s.st.AssetStateList(ctx, assetID)
}

// DeclaredAssets returns the concrete assets task taskID of dag declares as
// inlets or outlets, once each, inlets first (SPEC AS-2). Aliases are not
// resolved here: Service.TaskAssets adds what alias inlets resolve to.
func DeclaredAssets(dag *core.DAG, taskID string) []core.Asset {
	t := dag.Task(taskID)
	if t == nil {
		return nil
	}
	refs := make([]core.AssetRef, 0, len(t.Inlets)+len(t.Outlets))
	refs = append(append(refs, t.Inlets...), t.Outlets...)
	return dag.ConcreteAssets(refs)
}

// CheckAssetAccess decides whether a task that declares the concrete assets
// declared may read (write false) or write the state of asset (SPEC AS-4):
// only a declared asset, except that with [state_store]
// allow_undeclared_asset_reads any asset may be read. A refusal wraps
// core.ErrForbidden and names the asset and what the task declares.
func (s *Service) CheckAssetAccess(taskID string, declared []core.Asset, asset *core.AssetModel, write bool) error {
	for _, d := range declared {
		if d.Name == asset.Name {
			return nil
		}
	}
	if !write && s.cfg.AllowUndeclaredAssetReads {
		return nil
	}
	names := make([]string, len(declared))
	for i, d := range declared {
		names[i] = strconv.Quote(d.Name)
	}
	list := "none"
	if len(names) > 0 {
		list = strings.Join(names, ", ")
	}
	return fmt.Errorf("task %s may not access the state of asset %q: it is not one of the task's inlets or outlets "+
		"(declared: %s): %w", taskID, asset.Name, list, core.ErrForbidden)
}

// sweepAssets is cleanup's asset orphan sweep (SPEC AS-5, GC-1): the state
// of every asset inactive for longer than [state_store]
// asset_state_orphan_retention_days goes, in batches of
// state_cleanup_batch_size with a commit per batch (0 = one statement);
// with rep.DryRun it is only listed. With the option at 0 nothing is swept.
func (s *Service) sweepAssets(ctx context.Context, rep *CleanupReport) error {
	days := s.cfg.AssetOrphanRetentionDays
	if days <= 0 {
		return nil
	}
	rep.OrphanBefore = rep.Before.AddDate(0, 0, -days)
	if rep.DryRun {
		orphans, err := s.st.AssetStateOrphans(ctx, rep.OrphanBefore, 0)
		if err != nil {
			return fmt.Errorf("asset state orphan sweep (dry run): %w", err)
		}
		rep.Orphans = orphans
		return nil
	}
	n, _, err := inBatches(ctx, s.cfg.CleanupBatchSize, func(batch int) (int64, error) {
		return s.st.AssetStateDeleteOrphans(ctx, rep.OrphanBefore, batch)
	})
	rep.OrphansDeleted = n
	if err != nil {
		return fmt.Errorf("asset state orphan sweep after %d rows: %w", rep.OrphansDeleted, err)
	}
	return nil
}
