package stateref

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/objstore"
)

// TaskState is a try's task state through the worker-side backend: the
// Execution API client's methods, with every value kept in an object store
// and only its reference in the database. It satisfies operator.TaskState.
type TaskState struct {
	client *execclient.Client
	obj    objects
	scope  execclient.TaskIdentity // the task instance; TIID and TryNumber unused
}

// NewTaskState wraps c, a client holding a try's identity, so that its task
// state values live in st. Failed object deletes are reported on log
// (nil = discarded).
func NewTaskState(c *execclient.Client, st objstore.Store, log *slog.Logger) (*TaskState, error) {
	id := c.Identity
	if id.DagID == "" || id.RunID == "" || id.TaskID == "" {
		return nil, fmt.Errorf("task state backend: the client does not name its task instance (dag %q, run %q, task %q; set %s, %s and %s)",
			id.DagID, id.RunID, id.TaskID, execclient.EnvDagID, execclient.EnvRunID, execclient.EnvTaskID)
	}
	return &TaskState{client: c, obj: newObjects(st, log, "task state"),
		scope: execclient.TaskIdentity{DagID: id.DagID, RunID: id.RunID, TaskID: id.TaskID, MapIndex: id.MapIndex}}, nil
}

// Ref returns the reference of key in this task instance's scope.
func (s *TaskState) Ref(key string) string { return TaskRef(s.scope, key) }

// TaskStateSet writes value to the object store under key's reference,
// then stores the reference with retention through the Execution API. A
// failure between the two leaves an object no row points to; the next set
// of key overwrites it, as the reference is the same.
//
// The API is asked first whether this try may still use its state (a read
// of key): a finished, replaced or foreign try is refused before its value
// could overwrite the object an existing row points to (SPEC SEC-3).
func (s *TaskState) TaskStateSet(ctx context.Context, key string, value json.RawMessage, retention string) error {
	if _, err := s.client.TaskStateGet(ctx, key); err != nil && !errors.Is(err, core.ErrNotFound) {
		return err
	}
	ref, err := s.obj.put(ctx, key, value, s.Ref(key))
	if err != nil {
		return err
	}
	return s.client.TaskStateSet(ctx, key, ref, retention)
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
	return s.obj.follow(ctx, key, raw, s.Ref(key))
}

// TaskStateDelete deletes key's row, then its object. A failed object
// delete is logged, not returned: the key is gone, and the next set of it
// overwrites the orphaned object.
func (s *TaskState) TaskStateDelete(ctx context.Context, key string) error {
	if err := s.client.TaskStateDelete(ctx, key); err != nil {
		return err
	}
	s.obj.remove(ctx, s.Ref(key))
	return nil
}

// TaskStateClear deletes the rows of this task instance (of every map index
// with allMapIndices), then every object under the scope's prefix. Failed
// object deletes are logged, as in TaskStateDelete.
func (s *TaskState) TaskStateClear(ctx context.Context, allMapIndices bool) error {
	if err := s.client.TaskStateClear(ctx, allMapIndices); err != nil {
		return err
	}
	s.obj.removePrefix(ctx, TaskPrefix(s.scope, allMapIndices))
	return nil
}
