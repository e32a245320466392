package execapi

import (
	"context"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// outletEvents returns one asset event per concrete outlet the try's task
// declares in its DAG version (aliases produce none); the state handler
// records them in the success transition's transaction (docs/assets.md).
func (s *server) outletEvents(ctx context.Context, ti *core.TaskInstance, now time.Time) ([]store.AssetEventParams, error) {
	v, err := s.versions.get(ctx, s.st, ti.DagVersionID)
	if err != nil {
		return nil, fmt.Errorf("load dag version %d: %w", ti.DagVersionID, err)
	}
	task := v.Spec.Task(ti.TaskID)
	if task == nil {
		return nil, nil
	}
	var out []store.AssetEventParams
	for _, a := range v.Spec.ConcreteAssets(task.Outlets) {
		out = append(out, store.AssetEventParams{AssetName: a.Name, SourceKind: core.AssetSourceTask,
			SourceDagID: ti.DagID, SourceRunID: ti.RunID, SourceTaskID: ti.TaskID, SourceMapIndex: ti.MapIndex,
			SourceTryNumber: ti.TryNumber, Now: now})
	}
	return out, nil
}
