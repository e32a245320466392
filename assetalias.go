package weir

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
)

// The worker's Execution API client serves a Go task's alias outlets.
var _ operator.AliasOutlets = (*execclient.Client)(nil)

// AddToAlias adds the concrete asset to alias, an alias this task declares
// in Outlets, with extra as the event's extra (nil for none). The addition
// is kept while the try runs; when the try succeeds the asset gets an event
// (source kind task) and the alias resolves to the asset from then on, so
// DAGs scheduled on the alias run and tasks with the alias as an inlet
// reach the asset's state. A failed try records nothing. Airflow's
// outlet_events[AssetAlias(alias)].add(asset, extra):
//
//	dyn := weir.Alias("daily_export")
//	d.Go("export", func(ctx context.Context, tc *weir.TaskContext) (any, error) {
//		return nil, tc.AddToAlias(ctx, dyn, weir.Asset("export_2024"), map[string]any{"rows": 10})
//	}, weir.Outlets(dyn))
//
// The asset must exist and be active (some active DAG defines it).
func (tc *TaskContext) AddToAlias(ctx context.Context, alias, asset AssetRef, extra map[string]any) error {
	switch {
	case alias.def != nil:
		return fmt.Errorf("AddToAlias: the first argument must be an alias (weir.Alias(NAME)), not asset %q", alias.def.Name)
	case asset.def == nil:
		return fmt.Errorf("AddToAlias: the asset must be concrete (weir.Asset(NAME)), not alias %q", asset.alias)
	}
	var raw json.RawMessage
	if extra != nil {
		b, err := json.Marshal(extra)
		if err != nil {
			return fmt.Errorf("AddToAlias: encode extra: %w", err)
		}
		raw = b
	}
	return tc.op.AliasOutlets().AddToAlias(ctx, alias.alias, core.AssetRef{Name: asset.def.Name}, raw)
}
