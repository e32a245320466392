package service

import (
	"context"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/tasklog"
)

// AnyRun is the dag id and run id that stand for every DAG and run (the
// REST API's "~"): a callback's log is then found by its id alone.
const AnyRun = "~"

// TaskLogKey finds the log of try (0 = the current try) of the task
// instance k, and returns it with the instance. An unknown instance, or a
// try past the current one, is an error wrapping core.ErrNotFound.
func (s *Service) TaskLogKey(ctx context.Context, k core.TIKey, try int) (tasklog.Key, *core.TaskInstance, error) {
	ti, err := s.st.TaskInstanceGetByKey(ctx, k.DagID, k.RunID, k.TaskID, k.MapIndex)
	if err != nil {
		return tasklog.Key{}, nil, fmt.Errorf("task instance dag_id %q dag_run_id %q task_id %q map_index %d: %w",
			k.DagID, k.RunID, k.TaskID, k.MapIndex, err)
	}
	key, err := tasklog.TryKey(ti, try)
	return key, ti, err
}

// CallbackLogKey finds the log of attempt (0 = the latest) of callback id,
// which must be one of run runID of dagID unless both are AnyRun. An
// unknown callback, one of another run, or an attempt it has not had is an
// error wrapping core.ErrNotFound. It returns the callback too.
func (s *Service) CallbackLogKey(ctx context.Context, dagID, runID string, id int64, attempt int) (tasklog.Key, *core.Callback, error) {
	cb, err := s.Callback(ctx, dagID, runID, id)
	if err != nil {
		return tasklog.Key{}, nil, err
	}
	key, err := tasklog.AttemptKey(cb, attempt)
	return key, cb, err
}

// Callback reads callback id, which must be one of run runID of dagID
// unless both are AnyRun; an unknown callback, or one of another run, is an
// error wrapping core.ErrNotFound.
func (s *Service) Callback(ctx context.Context, dagID, runID string, id int64) (*core.Callback, error) {
	cb, err := s.st.CallbackGet(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("callback %d: %w", id, err)
	}
	if (dagID != AnyRun || runID != AnyRun) && (cb.DagID != dagID || cb.RunID != runID) {
		return nil, fmt.Errorf("callback %d is not one of dag run %s/%s: %w", id, dagID, runID, core.ErrNotFound)
	}
	return cb, nil
}
