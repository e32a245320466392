package weir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/weirflow/weir/internal/operator"
)

// NeverExpire is the retention of a task-state key that cleanup never
// deletes (Airflow's NEVER_EXPIRE, which is timedelta.max):
//
//	tc.TaskState().Set(ctx, "job_id", id, weir.NeverExpire)
const NeverExpire time.Duration = math.MaxInt64

// TaskState is a Go task's task state: JSON values under string keys,
// scoped to this task instance (dag, run, task, map index) and shared by
// every try of it, so a retry reads what an earlier try wrote. Values are
// stored as plain text; do not put secrets in them (docs/task-state.md).
type TaskState struct {
	op     operator.TaskState
	taskID string
}

// TaskState returns this task instance's task state.
func (tc *TaskContext) TaskState() *TaskState {
	return &TaskState{op: tc.op.TaskState(), taskID: tc.TaskID}
}

// Get returns key's value decoded as JSON into any (objects as
// map[string]any, numbers as json.Number so an integer keeps its exact
// digits), or def when the key is absent. Use GetState for a typed value.
func (s *TaskState) Get(ctx context.Context, key string, def any) (any, error) {
	raw, err := s.op.TaskStateGet(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return def, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get task state %q of task %s: %w", key, s.taskID, err)
	}
	v, err := decodeStateValue(raw)
	if err != nil {
		return nil, fmt.Errorf("decode task state %q of task %s: %w", key, s.taskID, err)
	}
	return v, nil
}

// decodeStateValue decodes a stored JSON value into any, numbers as
// json.Number so that an integer keeps its exact digits.
func decodeStateValue(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// encodeStateValue encodes a value to store: any value but nil that JSON
// can represent (NaN and ±Inf cannot).
func encodeStateValue(value any) ([]byte, error) {
	if value == nil {
		return nil, errors.New("nil cannot be stored; use Delete")
	}
	b, err := json.Marshal(value)
	if err != nil {
		return nil, fmt.Errorf("value is not JSON (NaN and ±Inf cannot be stored): %w", err)
	}
	return b, nil
}

// Set stores value (encoded as JSON; any value but nil) under key. With no
// retention the key expires [state_store] default_retention_days after the
// write; a positive duration expires it that long after the write; and
// NeverExpire keeps it until it is deleted. Expiry is computed by the
// api-server's clock when it receives the write.
func (s *TaskState) Set(ctx context.Context, key string, value any, retention ...time.Duration) error {
	b, err := encodeStateValue(value)
	if err != nil {
		return fmt.Errorf("set task state %q of task %s: %w", key, s.taskID, err)
	}
	var text string
	switch {
	case len(retention) > 1:
		return fmt.Errorf("set task state %q of task %s: give at most one retention, got %d", key, s.taskID, len(retention))
	case len(retention) == 0:
	case retention[0] == NeverExpire:
		text = "never"
	case retention[0] <= 0:
		return fmt.Errorf("set task state %q of task %s: retention must be positive, got %s", key, s.taskID, retention[0])
	default:
		text = retention[0].String()
	}
	if err := s.op.TaskStateSet(ctx, key, b, text); err != nil {
		return fmt.Errorf("set task state %q of task %s: %w", key, s.taskID, err)
	}
	return nil
}

// Delete removes key; an absent key is not an error.
func (s *TaskState) Delete(ctx context.Context, key string) error {
	if err := s.op.TaskStateDelete(ctx, key); err != nil {
		return fmt.Errorf("delete task state %q of task %s: %w", key, s.taskID, err)
	}
	return nil
}

// Clear removes every key of this task instance, or with allMapIndices of
// every mapped instance of this task in this run.
func (s *TaskState) Clear(ctx context.Context, allMapIndices bool) error {
	if err := s.op.TaskStateClear(ctx, allMapIndices); err != nil {
		return fmt.Errorf("clear task state of task %s: %w", s.taskID, err)
	}
	return nil
}

// GetState returns key's task-state value decoded into T, and whether the
// key was there (false with T's zero value when absent).
//
//	last, ok, err := weir.GetState[int](ctx, tc, "last_page")
func GetState[T any](ctx context.Context, tc *TaskContext, key string) (T, bool, error) {
	var out T
	raw, err := tc.op.TaskState().TaskStateGet(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return out, false, nil
	}
	if err != nil {
		return out, false, fmt.Errorf("get task state %q of task %s: %w", key, tc.TaskID, err)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, true, fmt.Errorf("task state %q of task %s: cannot decode %s into %T: %w", key, tc.TaskID, raw, out, err)
	}
	return out, true, nil
}
