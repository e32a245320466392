package scheduler

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// expand replaces a mapped task's placeholder with one scheduled instance
// per element of its expand arguments (literal lists and upstream XComs), or
// skips it when there are none. A value that cannot be mapped over (missing,
// not a list or object, too long) fails the placeholder with a logged error
// naming the task and argument; its downstream tasks then become
// upstream_failed.
func (s *Scheduler) expand(ctx context.Context, run *core.DagRun, g *graph, ph *core.TaskInstance, now time.Time) error {
	task := g.tasks[ph.TaskID]
	values := make(map[string]json.RawMessage, len(task.Expand))
	var bad error
	for name, src := range task.Expand {
		if src.XCom == nil {
			b, err := json.Marshal(src.Values)
			if err != nil {
				return fmt.Errorf("expand %s: encode argument %q: %w", runs.Describe(ph), name, err)
			}
			values[name] = b
			continue
		}
		v, err := s.xcomValue(ctx, run, g, src.XCom)
		if err != nil {
			if !errors.Is(err, core.ErrNotFound) {
				return fmt.Errorf("expand %s: %w", runs.Describe(ph), err)
			}
			bad = fmt.Errorf("task %q expand argument %q: %w", task.TaskID, name, err)
			break
		}
		values[name] = v
	}
	var args []json.RawMessage
	if bad == nil {
		args, bad = expandArgs(task.TaskID, values, s.Config.MaxMapLength)
	}
	if bad != nil {
		s.Logger.Error("cannot expand mapped task; failing it", "dag_id", run.DagID, "run_id", run.RunID,
			"task_id", task.TaskID, "err", bad)
		return s.failNone(ctx, ph)
	}
	instances := make([]store.NewTaskInstance, len(args))
	for i, a := range args {
		instances[i] = mappedInstance(ph, task, i, a)
	}
	err := s.Store.TaskInstanceExpand(ctx, &store.TaskInstanceExpandParams{
		DagRunID: run.ID, TaskID: ph.TaskID, Instances: instances, Now: now,
	})
	if err != nil && !benign(err) {
		return fmt.Errorf("expand %s into %d instances: %w", runs.Describe(ph), len(instances), err)
	}
	return nil
}

// xcomValue returns the XCom a mapped argument refers to. For a mapped
// upstream task the values of its map indexes are gathered into one list,
// in map_index order. ErrNotFound when the upstream pushed nothing.
func (s *Scheduler) xcomValue(ctx context.Context, run *core.DagRun, g *graph, ref *core.XComRef) (json.RawMessage, error) {
	v, err := runs.PullXCom(ctx, s.Store, run.DagID, run.RunID, g.tasks[ref.TaskID], ref.TaskID, ref.Key)
	switch {
	case errors.Is(err, core.ErrNotFound):
		return nil, fmt.Errorf("upstream task %q pushed no XCom %q to map over: %w", ref.TaskID, cmp.Or(ref.Key, core.DefaultXComKey), core.ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("read XCom %q of task %q: %w", cmp.Or(ref.Key, core.DefaultXComKey), ref.TaskID, err)
	}
	return v, nil
}
