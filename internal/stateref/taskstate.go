package stateref

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/statestore"
)

// ErrMissingObject is returned by Get when the database holds a reference
// whose object is not in the object store (removed outside Weir, or
// [workers] state_backend now names another store). It deliberately does
// not match core.ErrNotFound: the key exists, its value is lost.
var ErrMissingObject = errors.New("state reference has no object")

// TaskState is a try's task state through the worker-side backend: the
// Execution API client's methods, with every value kept in an object store
// and only its reference in the database. It satisfies operator.TaskState.
type TaskState struct {
	client *execapi.Client
	store  objstore.Store
	scope  statestore.TaskScope
	log    *slog.Logger
}

// NewTaskState wraps c, a client holding a try's identity, so that its task
// state values live in st. Failed object deletes are reported on log
// (nil = discarded).
func NewTaskState(c *execapi.Client, st objstore.Store, log *slog.Logger) (*TaskState, error) {
	id := c.Identity
	if id.DagID == "" || id.RunID == "" || id.TaskID == "" {
		return nil, fmt.Errorf("task state backend: the client does not name its task instance (dag %q, run %q, task %q; set %s, %s and %s)",
			id.DagID, id.RunID, id.TaskID, execapi.EnvDagID, execapi.EnvRunID, execapi.EnvTaskID)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &TaskState{client: c, store: st, log: log,
		scope: statestore.TaskScope{DagID: id.DagID, RunID: id.RunID, TaskID: id.TaskID, MapIndex: id.MapIndex}}, nil
}

// Ref returns the reference of key in this task instance's scope.
func (s *TaskState) Ref(key string) string { return TaskRef(s.scope, key) }

// TaskStateSet writes value to the object store under key's reference,
// then stores the reference with retention through the Execution API. A
// failure between the two leaves an object no row points to; the next set
// of key overwrites it, as the reference is the same.
func (s *TaskState) TaskStateSet(ctx context.Context, key string, value json.RawMessage, retention string) error {
	if err := statestore.CheckKey(key); err != nil {
		return err
	}
	v, err := statestore.ParseValue(value)
	if err != nil {
		return err
	}
	ref := s.Ref(key)
	if err := s.store.Put(ctx, ref, v); err != nil {
		return fmt.Errorf("write task state %q to the object store as %s: %w", key, ref, err)
	}
	return s.client.TaskStateSet(ctx, key, Encode(ref), retention)
}

// TaskStateGet returns key's value: the object its reference names, or the
// stored value itself when it is not a reference (written inline before
// the backend was configured). An absent key matches core.ErrNotFound; a
// reference without its object matches ErrMissingObject.
func (s *TaskState) TaskStateGet(ctx context.Context, key string) (json.RawMessage, error) {
	raw, err := s.client.TaskStateGet(ctx, key)
	if err != nil {
		return nil, err
	}
	ref, ok := Decode(raw)
	if !ok {
		return raw, nil
	}
	if want := s.Ref(key); ref != want {
		return nil, fmt.Errorf("task state %q holds reference %q, but this task instance's reference for it is %q: %w",
			key, ref, want, core.ErrInvalid)
	}
	data, err := s.store.Get(ctx, ref)
	if errors.Is(err, core.ErrNotFound) {
		return nil, fmt.Errorf("task state %q: the database holds reference %q but the object store %s has no object under it: %w",
			key, ref, storeName(s.store), ErrMissingObject)
	}
	if err != nil {
		return nil, fmt.Errorf("read task state %q from the object store (%s): %w", key, ref, err)
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("task state %q: object %s in %s is not JSON: %w", key, ref, storeName(s.store), core.ErrInvalid)
	}
	return data, nil
}

// TaskStateDelete deletes key's row, then its object. A failed object
// delete is logged, not returned: the key is gone, and the next set of it
// overwrites the orphaned object.
func (s *TaskState) TaskStateDelete(ctx context.Context, key string) error {
	if err := s.client.TaskStateDelete(ctx, key); err != nil {
		return err
	}
	s.deleteObject(ctx, s.Ref(key))
	return nil
}

// TaskStateClear deletes the rows of this task instance (of every map index
// with allMapIndices), then every object under the scope's prefix. Failed
// object deletes are logged, as in TaskStateDelete.
func (s *TaskState) TaskStateClear(ctx context.Context, allMapIndices bool) error {
	if err := s.client.TaskStateClear(ctx, allMapIndices); err != nil {
		return err
	}
	prefix := TaskPrefix(s.scope, allMapIndices)
	refs, err := s.store.List(ctx, prefix)
	if err != nil {
		s.log.Warn("task state cleared, but its objects could not be listed; they stay until each key is set again",
			"prefix", prefix, "store", storeName(s.store), "err", err)
		return nil
	}
	for _, ref := range refs {
		s.deleteObject(ctx, ref)
	}
	return nil
}

// deleteObject removes the object of a deleted row, logging a failure.
func (s *TaskState) deleteObject(ctx context.Context, ref string) {
	if err := s.store.Delete(ctx, ref); err != nil {
		s.log.Warn("task state deleted, but its object could not be; the next set of the key overwrites it",
			"ref", ref, "store", storeName(s.store), "err", err)
	}
}

// storeName names st for messages (never with credentials).
func storeName(st objstore.Store) string {
	if s, ok := st.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", st)
}
