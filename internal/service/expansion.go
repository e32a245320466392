package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// Expansion is where the lazy expansion of a task mapped over a stream
// (iterate) stands in one run (docs/streaming.md#lazy-expansion).
type Expansion struct {
	TaskID string `json:"task_id"`
	// Iterate is the producer task.
	Iterate  string `json:"iterate"`
	StreamID string `json:"stream_id"`
	// Items is how many items the producer sent so far (0 while its stream
	// is not open yet).
	Items int64 `json:"items"`
	// Instances is how many mapped instances exist so far.
	Instances int `json:"instances"`
	// Open is true while more items may come (the producer has not
	// closed its stream): the expansion is not complete.
	Open bool `json:"open"`
	// Error is why the producer's stream failed ("" = it did not).
	Error string `json:"error,omitempty"`
}

// Expansion returns the lazy expansion of task taskID in run runID of
// dagID. core.ErrNotFound for an unknown run or task, core.ErrInvalid for
// a task that does not iterate over a stream.
func (s *Service) Expansion(ctx context.Context, dagID, runID, taskID string) (*Expansion, error) {
	run, err := s.st.DagRunGet(ctx, dagID, runID)
	if err != nil {
		return nil, err
	}
	v, err := s.DagVersion(ctx, run.DagVersionID)
	if err != nil {
		return nil, err
	}
	task := v.Spec.Task(taskID)
	switch {
	case task == nil:
		return nil, fmt.Errorf("dag %s has no task %q in run %s's version: %w", dagID, taskID, runID, core.ErrNotFound)
	case !task.Iterates():
		return nil, fmt.Errorf("task %q does not iterate over a stream (it has no iterate), so it has no lazy expansion: %w", taskID, core.ErrInvalid)
	}
	e := &Expansion{TaskID: taskID, Iterate: task.Iterate, StreamID: core.TaskStreamID(run.ID, task.Iterate), Open: true}
	switch st, err := s.st.StreamGet(ctx, e.StreamID); {
	case errors.Is(err, core.ErrNotFound): // open until its producer ends without opening it
		prod, err := s.st.TaskInstanceGetByKey(ctx, dagID, runID, task.Iterate, core.NoMapIndex)
		if err == nil && prod.State.Terminal() {
			e.Open = false
			if prod.State != core.TISuccess {
				e.Error = fmt.Sprintf("the producer task %q ended %s before it opened its stream", task.Iterate, prod.State)
			}
		}
	case err != nil:
		return nil, err
	default:
		e.Items, e.Open, e.Error = st.NextIndex, !st.Closed, st.Error
	}
	n, err := s.st.TaskInstanceCount(ctx, &store.TaskInstanceListParams{DagRunID: run.ID, TaskID: taskID})
	if err != nil {
		return nil, fmt.Errorf("count the instances of %s: %w", taskID, err)
	}
	ph, err := s.st.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: run.ID, TaskID: taskID, Page: store.Page{Limit: 1}})
	if err != nil {
		return nil, fmt.Errorf("list the instances of %s: %w", taskID, err)
	}
	if len(ph) > 0 && ph[0].MapIndex == core.NoMapIndex {
		n-- // the placeholder (first in map_index order) stands for the items to come
	}
	e.Instances = n
	return e, nil
}
