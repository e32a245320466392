package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/statevalue"
	"github.com/weirflow/weir/internal/store"
)

// TaskStateEntry is one task-state key with its value and metadata (SPEC
// TS-6). updated_by_run and updated_by_try name the task try that wrote it;
// "" and 0 mean a user wrote it (the audit log names who).
type TaskStateEntry struct {
	DagID        string          `json:"dag_id"`
	RunID        string          `json:"dag_run_id"`
	TaskID       string          `json:"task_id"`
	MapIndex     int             `json:"map_index"`
	Key          string          `json:"key"`
	Value        json.RawMessage `json:"value"`
	UpdatedAt    time.Time       `json:"updated_at"`
	UpdatedByRun string          `json:"updated_by_run"`
	UpdatedByTry int             `json:"updated_by_try"`
	ExpiresAt    *time.Time      `json:"expires_at"`
	NeverExpire  bool            `json:"never_expire"`
}

// TaskStateCollection lists a task instance's keys.
type TaskStateCollection struct {
	Entries      []TaskStateEntry `json:"entries"`
	TotalEntries int              `json:"total_entries"`
}

// TaskStateKeyParam names one task-state key of a task instance.
type TaskStateKeyParam struct {
	TaskInstanceParam
	Key string `path:"key" doc:"state key"`
}

type setTaskStateInput struct {
	TaskStateKeyParam
	RawBody []byte `contentType:"application/json" doc:"{\"value\": <any JSON but null>, \"retention\": \"6h\" | \"7d\" | \"never\" (optional)}"`
}

type clearTaskStateInput struct {
	TaskInstanceParam
	AllMapIndices bool `query:"all_map_indices" doc:"clear every map index of the task in the run"`
}

// setTaskStateBody is what PUT .../state-store/{key} takes.
type setTaskStateBody struct {
	Value     json.RawMessage `json:"value"`
	Retention json.RawMessage `json:"retention,omitempty"`
}

func (s *server) registerTaskState() {
	s.states = s.cfg.State
	if s.states == nil {
		s.states = statestore.New(s.st, s.clk, statestore.Config{DefaultRetentionDays: statestore.DefaultRetentionDays})
	}
	tags := []string{"Task State"}
	base := Prefix + "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/state-store"
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_task_state_entries", Method: http.MethodGet, Path: base, Tags: tags,
		Summary: "List a task instance's task state with metadata", Errors: []int{http.StatusNotFound},
	}, s.listTaskState)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_task_state_entry", Method: http.MethodGet, Path: base + "/{key}", Tags: tags,
		Summary: "Get one task state key", Errors: []int{http.StatusNotFound},
	}, s.getTaskState)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "set_task_state_entry", Method: http.MethodPut, Path: base + "/{key}", Tags: tags,
		Summary:      "Set one task state key",
		Description:  "The body is {\"value\": <JSON>, \"retention\": \"6h\" | \"7d\" | \"never\"}; expires_at is computed with the server's clock. Audited.",
		MaxBodyBytes: s.states.MaxBodyBytes(),
		// The body is checked by statestore, whose messages name NaN,
		// null, the size limit or the retention at fault.
		SkipValidateBody: true,
		Errors:           []int{http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge},
	}, s.setTaskState)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "delete_task_state_entry", Method: http.MethodDelete, Path: base + "/{key}", Tags: tags,
		Summary: "Delete one task state key (absent is fine); audited", DefaultStatus: http.StatusNoContent,
		Errors: []int{http.StatusNotFound},
	}, s.deleteTaskState)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "clear_task_state", Method: http.MethodDelete, Path: base, Tags: tags,
		Summary: "Clear a task instance's task state; audited", DefaultStatus: http.StatusNoContent,
		Errors: []int{http.StatusNotFound},
	}, s.clearTaskState)
}

// taskStateScope checks that the task instance exists and returns its scope.
func (s *server) taskStateScope(ctx context.Context, in *TaskInstanceParam) (statestore.TaskScope, string, error) {
	ti, err := s.taskInstance(ctx, in.DagID, in.RunID, in.TaskID, in.MapIndex)
	if err != nil {
		return statestore.TaskScope{}, "", s.problem(ctx, err)
	}
	return statestore.TaskScope{DagID: ti.DagID, RunID: ti.RunID, TaskID: ti.TaskID, MapIndex: ti.MapIndex}, runs.Target(ti), nil
}

func (s *server) listTaskState(ctx context.Context, in *TaskInstanceParam) (*struct{ Body TaskStateCollection }, error) {
	sc, _, err := s.taskStateScope(ctx, in)
	if err != nil {
		return nil, err
	}
	rows, err := s.states.List(ctx, &store.TaskStateListParams{DagID: sc.DagID, RunID: sc.RunID, TaskID: sc.TaskID, MapIndex: &sc.MapIndex})
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	out := TaskStateCollection{Entries: make([]TaskStateEntry, len(rows)), TotalEntries: len(rows)}
	for i, r := range rows {
		out.Entries[i] = TaskStateEntry{DagID: r.DagID, RunID: r.RunID, TaskID: r.TaskID, MapIndex: r.MapIndex, Key: r.Key,
			Value: r.Value, UpdatedAt: r.UpdatedAt, UpdatedByRun: r.UpdatedByRun, UpdatedByTry: r.UpdatedByTry,
			ExpiresAt: r.ExpiresAt, NeverExpire: r.NeverExpire}
	}
	return &struct{ Body TaskStateCollection }{out}, nil
}

func taskStateEntry(sc statestore.TaskScope, e *statestore.Entry) TaskStateEntry {
	return TaskStateEntry{DagID: sc.DagID, RunID: sc.RunID, TaskID: sc.TaskID, MapIndex: sc.MapIndex, Key: e.Key,
		Value: e.Value, UpdatedAt: e.UpdatedAt, UpdatedByRun: e.UpdatedByRun, UpdatedByTry: e.UpdatedByTry,
		ExpiresAt: e.ExpiresAt, NeverExpire: e.NeverExpire}
}

func (s *server) getTaskState(ctx context.Context, in *TaskStateKeyParam) (*struct{ Body TaskStateEntry }, error) {
	sc, target, err := s.taskStateScope(ctx, &in.TaskInstanceParam)
	if err != nil {
		return nil, err
	}
	e, err := s.states.Get(ctx, sc, in.Key)
	if errors.Is(err, core.ErrNotFound) {
		return nil, huma.NewError(http.StatusNotFound, fmt.Sprintf("no task state key %q for task instance %s", in.Key, target))
	}
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body TaskStateEntry }{taskStateEntry(sc, e)}, nil
}

func (s *server) setTaskState(ctx context.Context, in *setTaskStateInput) (*struct{ Body TaskStateEntry }, error) {
	sc, target, err := s.taskStateScope(ctx, &in.TaskInstanceParam)
	if err != nil {
		return nil, err
	}
	body, ret, err := s.parseStateBody(ctx, in.RawBody)
	if err != nil {
		return nil, err
	}
	e, err := s.states.Set(ctx, sc, in.Key, body.Value, ret, statestore.Writer{})
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	s.audit(ctx, "task_state.set", target, fmt.Sprintf("key=%s retention=%s", in.Key, ret))
	return &struct{ Body TaskStateEntry }{taskStateEntry(sc, e)}, nil
}

// parseStateBody decodes a PUT .../state-store/{key} body (task or asset
// state) and its retention; errors are 400 problems naming what is wrong.
func (s *server) parseStateBody(ctx context.Context, raw []byte) (*setTaskStateBody, statevalue.Retention, error) {
	var body setTaskStateBody
	if err := json.Unmarshal(raw, &body); err != nil {
		if _, verr := statevalue.ParseValue(raw); verr != nil {
			return nil, statevalue.Retention{}, invalid(fmt.Sprintf("body: %v", verr))
		}
		return nil, statevalue.Retention{}, invalid(fmt.Sprintf("body: want {\"value\": <json>, \"retention\": \"6h\"|\"never\"}: %v", err))
	}
	ret, err := statevalue.ParseRetentionJSON(body.Retention)
	if err != nil {
		return nil, statevalue.Retention{}, s.problem(ctx, err)
	}
	return &body, ret, nil
}

func (s *server) deleteTaskState(ctx context.Context, in *TaskStateKeyParam) (*struct{}, error) {
	sc, target, err := s.taskStateScope(ctx, &in.TaskInstanceParam)
	if err != nil {
		return nil, err
	}
	if err := s.states.Delete(ctx, sc, in.Key); err != nil {
		return nil, s.problem(ctx, err)
	}
	s.audit(ctx, "task_state.delete", target, "key="+in.Key)
	return nil, nil
}

func (s *server) clearTaskState(ctx context.Context, in *clearTaskStateInput) (*struct{}, error) {
	sc, target, err := s.taskStateScope(ctx, &in.TaskInstanceParam)
	if err != nil {
		return nil, err
	}
	if err := s.states.Clear(ctx, sc, in.AllMapIndices); err != nil {
		return nil, s.problem(ctx, err)
	}
	s.audit(ctx, "task_state.clear", target, fmt.Sprintf("all_map_indices=%t", in.AllMapIndices))
	return nil, nil
}
