package operator

import (
	"context"
	"encoding/json"
	"errors"
)

// TaskState is a try's access to its task instance's task state (an
// execclient.Client satisfies it). Values are JSON; retention is "" (the
// default), "never" or a duration such as "6h".
type TaskState interface {
	TaskStateGet(ctx context.Context, key string) (json.RawMessage, error)
	TaskStateSet(ctx context.Context, key string, value json.RawMessage, retention string) error
	TaskStateDelete(ctx context.Context, key string) error
	TaskStateClear(ctx context.Context, allMapIndices bool) error
}

// errNoTaskState is returned when a try runs without an Execution API client.
var errNoTaskState = errors.New("task state: no Execution API client")

// taskStateOf returns the request's task state access: req.State when
// set, else the worker's XCom client, the try's Execution API client, which
// serves task state too.
func taskStateOf(req *Request) TaskState {
	if req.State != nil {
		return req.State
	}
	ts, _ := req.XCom.(TaskState)
	return ts
}

// TaskState returns the try's task state access; calls fail with an error
// when the try has no Execution API client.
func (tc TaskContext) TaskState() TaskState {
	if tc.state == nil {
		return noTaskState{}
	}
	return tc.state
}

// noTaskState answers every call with errNoTaskState.
type noTaskState struct{}

func (noTaskState) TaskStateGet(context.Context, string) (json.RawMessage, error) {
	return nil, errNoTaskState
}
func (noTaskState) TaskStateSet(context.Context, string, json.RawMessage, string) error {
	return errNoTaskState
}
func (noTaskState) TaskStateDelete(context.Context, string) error { return errNoTaskState }
func (noTaskState) TaskStateClear(context.Context, bool) error    { return errNoTaskState }
