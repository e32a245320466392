package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
)

// CallbackCollection is a page of a run's fired callbacks.
type CallbackCollection struct {
	Callbacks    []core.Callback `json:"callbacks"`
	TotalEntries int             `json:"total_entries"`
}

type callbacksInput struct {
	DagRunParam
	TaskID string `query:"task_id" doc:"only this task's callbacks (DAG-level ones have none)"`
	Page
}

type callbackInput struct {
	DagRunParam
	CallbackID int64 `path:"callback_id" minimum:"1" doc:"callback id"`
}

type callbackLogInput struct {
	DagRunParam
	CallbackID int64  `path:"callback_id" minimum:"1" doc:"callback id"`
	Attempt    int    `query:"attempt" minimum:"0" default:"0" doc:"the attempt whose log to read; 0 = the latest"`
	Token      string `query:"token" doc:"continuation_token of an earlier response: read on from there"`
	Accept     string `header:"Accept" doc:"text/plain for the raw log; JSON otherwise"`
}

func (s *server) registerCallbacks() {
	tags := []string{"DagRun"}
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "list_dag_run_callbacks", Method: http.MethodGet,
		Path: Prefix + "/dags/{dag_id}/dagRuns/{dag_run_id}/callbacks", Tags: tags,
		Summary: "List a run's callbacks",
		Description: listDoc("The callbacks the run's state changes fired (docs/emission.md#callbacks): the run's own "+
			"(no task_id) and its tasks', each with its state (queued, running, success, failed), attempts and error.", store.CallbackOrder),
		Errors: []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.listCallbacks)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_dag_run_callback", Method: http.MethodGet,
		Path: Prefix + "/dags/{dag_id}/dagRuns/{dag_run_id}/callbacks/{callback_id}", Tags: tags,
		Summary:     "Get a callback",
		Description: "One callback of the run, as the list shows it. `~` as both dag_id and dag_run_id finds it by its id alone.",
		Errors:      []int{http.StatusNotFound},
	}, s.getCallback)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_dag_run_callback_log", Method: http.MethodGet,
		Path: Prefix + "/dags/{dag_id}/dagRuns/{dag_run_id}/callbacks/{callback_id}/logs", Tags: tags,
		Summary: "Get a callback's log",
		Description: "Up to 1 MiB of one attempt's log from `token` on, as the try log route answers it: JSON " +
			"`{\"content\", \"continuation_token\"}` by default, the raw text with `Accept: text/plain`. " +
			"`~` as both dag_id and dag_run_id finds the callback by its id alone.",
		Errors:    []int{http.StatusBadRequest, http.StatusNotFound},
		Responses: s.logResponses(),
	}, s.getCallbackLog)
}

func (s *server) listCallbacks(ctx context.Context, in *callbacksInput) (*struct{ Body CallbackCollection }, error) {
	run, err := s.st.DagRunGet(ctx, in.DagID, in.RunID)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	list, total, err := listOf(ctx, s, &store.CallbackListParams{DagRunID: run.ID, TaskID: in.TaskID, Page: in.store()},
		s.st.CallbackList, s.st.CallbackCount)
	if err != nil {
		return nil, err
	}
	return &struct{ Body CallbackCollection }{CallbackCollection{Callbacks: list, TotalEntries: total}}, nil
}

func (s *server) getCallback(ctx context.Context, in *callbackInput) (*struct{ Body core.Callback }, error) {
	cb, err := s.svc.Callback(ctx, in.DagID, in.RunID, in.CallbackID)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body core.Callback }{*cb}, nil
}

func (s *server) getCallbackLog(ctx context.Context, in *callbackLogInput) (*logOutput, error) {
	var offset int64
	if in.Token != "" {
		var err error
		if offset, err = strconv.ParseInt(in.Token, 10, 64); err != nil || offset < 0 {
			return nil, invalid(fmt.Sprintf("token: %q is not a continuation_token returned by this endpoint", in.Token))
		}
	}
	key, cb, err := s.svc.CallbackLogKey(ctx, in.DagID, in.RunID, in.CallbackID, in.Attempt)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return s.logChunk(ctx, key, logRead{offset: offset}, in.Accept, tasklog.AttemptWriting(cb, key))
}
