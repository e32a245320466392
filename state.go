package weir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
)

// The worker's Execution API client serves a Go task's state.
var _ operator.State = (*execclient.Client)(nil)

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
	s stateAccess
}

// TaskState returns this task instance's task state.
func (tc *TaskContext) TaskState() *TaskState {
	scope := core.TaskScope(tc.DagID, tc.RunID, tc.TaskID, tc.MapIndex)
	return &TaskState{stateAccess{op: tc.op.State(), scope: func(context.Context) (core.StateScope, error) { return scope, nil }}}
}

// Get returns key's value decoded as JSON into any (objects as
// map[string]any, numbers as json.Number so an integer keeps its exact
// digits), or def when the key is absent. Use GetState for a typed value.
func (s *TaskState) Get(ctx context.Context, key string, def any) (any, error) {
	return s.s.get(ctx, key, def)
}

// Set stores value (encoded as JSON; any value but nil) under key. With no
// retention the key expires [state_store] default_retention_days after the
// write; a positive duration expires it that long after the write; and
// NeverExpire keeps it until it is deleted. Expiry is computed by the
// api-server's clock when it receives the write.
func (s *TaskState) Set(ctx context.Context, key string, value any, retention ...time.Duration) error {
	var text string
	switch {
	case len(retention) > 1:
		return s.s.fail(ctx, "set", key, fmt.Errorf("give at most one retention, got %d", len(retention)))
	case len(retention) == 0:
	case retention[0] == NeverExpire:
		text = "never"
	case retention[0] <= 0:
		return s.s.fail(ctx, "set", key, fmt.Errorf("retention must be positive, got %s", retention[0]))
	default:
		text = retention[0].String()
	}
	return s.s.set(ctx, key, value, text)
}

// Delete removes key; an absent key is not an error.
func (s *TaskState) Delete(ctx context.Context, key string) error { return s.s.delete(ctx, key) }

// Clear removes every key of this task instance, or with allMapIndices of
// every mapped instance of this task in this run.
func (s *TaskState) Clear(ctx context.Context, allMapIndices bool) error {
	return s.s.clear(ctx, allMapIndices)
}

// GetState returns key's task-state value decoded into T, and whether the
// key was there (false with T's zero value when absent).
//
//	last, ok, err := weir.GetState[int](ctx, tc, "last_page")
func GetState[T any](ctx context.Context, tc *TaskContext, key string) (T, bool, error) {
	return getTyped[T](ctx, &tc.TaskState().s, key)
}

// stateAccess is what TaskState and AssetState share: the reads and writes
// of one scope (the asset of the shorthand is looked up on first use)
// through the try's state access.
type stateAccess struct {
	op    operator.State
	scope func(ctx context.Context) (core.StateScope, error)
}

// fail wraps err of op on key with the scope.
func (a *stateAccess) fail(ctx context.Context, op, key string, err error) error {
	scope, serr := a.scope(ctx)
	if serr != nil {
		return fmt.Errorf("%s state %q: %w", op, key, err)
	}
	if key == "" {
		return fmt.Errorf("%s %s state of %s: %w", op, scope.Kind, scope.Describe(), err)
	}
	return fmt.Errorf("%s %s state %q of %s: %w", op, scope.Kind, key, scope.Describe(), err)
}

// raw returns key's stored JSON and whether it was there; an unknown or
// inactive asset is an error, not an absent key.
func (a *stateAccess) raw(ctx context.Context, key string) (json.RawMessage, bool, error) {
	scope, err := a.scope(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("get state %q: %w", key, err)
	}
	raw, err := a.op.StateGet(ctx, scope, key)
	if errors.Is(err, ErrNotFound) && !execclient.IsUnknownAsset(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, a.fail(ctx, "get", key, err)
	}
	return raw, true, nil
}

// get returns key's value decoded into any, or def when absent.
func (a *stateAccess) get(ctx context.Context, key string, def any) (any, error) {
	raw, ok, err := a.raw(ctx, key)
	if err != nil {
		return nil, err
	}
	if !ok {
		return def, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // an integer keeps its exact digits
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, a.fail(ctx, "decode", key, err)
	}
	return v, nil
}

// set stores value (any value but nil that JSON can represent: NaN and
// ±Inf cannot) with retention ("" for none).
func (a *stateAccess) set(ctx context.Context, key string, value any, retention string) error {
	if value == nil {
		return a.fail(ctx, "set", key, errors.New("nil cannot be stored; use Delete"))
	}
	b, err := json.Marshal(value)
	if err != nil {
		return a.fail(ctx, "set", key, fmt.Errorf("value is not JSON (NaN and ±Inf cannot be stored): %w", err))
	}
	return a.write(ctx, "set", key, func(scope core.StateScope) error { return a.op.StateSet(ctx, scope, key, b, retention) })
}

// delete removes key; absent is fine.
func (a *stateAccess) delete(ctx context.Context, key string) error {
	return a.write(ctx, "delete", key, func(scope core.StateScope) error { return a.op.StateDelete(ctx, scope, key) })
}

// clear removes every key of the scope.
func (a *stateAccess) clear(ctx context.Context, allMapIndices bool) error {
	return a.write(ctx, "clear", "", func(scope core.StateScope) error { return a.op.StateClear(ctx, scope, allMapIndices) })
}

// write runs op (a change of key, "" for the scope) on the scope.
func (a *stateAccess) write(ctx context.Context, op, key string, change func(core.StateScope) error) error {
	scope, err := a.scope(ctx)
	if err == nil {
		err = change(scope)
	}
	if err != nil {
		return a.fail(ctx, op, key, err)
	}
	return nil
}

// getTyped returns key's value decoded into T and whether it was there.
func getTyped[T any](ctx context.Context, a *stateAccess, key string) (T, bool, error) {
	var out T
	raw, ok, err := a.raw(ctx, key)
	if err != nil || !ok {
		return out, false, err
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, true, a.fail(ctx, "decode", key, fmt.Errorf("cannot decode %s into %T: %w", raw, out, err))
	}
	return out, true, nil
}
