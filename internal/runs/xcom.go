package runs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// XComReader is what PullXCom reads XComs with.
type XComReader interface {
	XComGet(ctx context.Context, dagID, runID, taskID string, mapIndex int, key string) (*core.XCom, error)
	XComList(ctx context.Context, p *store.XComListParams) ([]core.XCom, error)
}

// PullXCom is what pulling XCom key ("" = return_value) of task taskID in
// a run gives when no map index is named, as Airflow's xcom_pull without
// map_indexes: an unmapped task's one value, or, when task (its definition
// in the run's DAG version; nil = unknown) is mapped or iterates, the values its
// instances pushed as one JSON list in map index order ([] when none did).
// An expansion over the task reads the same list. ErrNotFound when an
// unmapped task pushed no such value.
func PullXCom(ctx context.Context, st XComReader, dagID, runID string, task *core.Task, taskID, key string) (json.RawMessage, error) {
	if key == "" {
		key = core.DefaultXComKey
	}
	if task == nil || !task.HasMapIndexes() {
		x, err := st.XComGet(ctx, dagID, runID, taskID, core.NoMapIndex, key)
		if err != nil {
			return nil, err
		}
		return x.Value, nil
	}
	xs, err := st.XComList(ctx, &store.XComListParams{DagID: dagID, RunID: runID, TaskID: taskID, Key: key})
	if err != nil {
		return nil, fmt.Errorf("list XComs %q of mapped task %q: %w", key, taskID, err)
	}
	items := make([]json.RawMessage, 0, len(xs)) // XComList is in map_index order
	for _, x := range xs {
		if x.MapIndex >= 0 {
			items = append(items, x.Value)
		}
	}
	return json.Marshal(items)
}
