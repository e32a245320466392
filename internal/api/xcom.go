package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// XComCollection is a page of XCom entries (values omitted, as in Airflow).
type XComCollection struct {
	XComEntries  []XComEntry `json:"xcom_entries"`
	TotalEntries int         `json:"total_entries"`
}

// XComEntry describes one XCom without its value.
type XComEntry struct {
	Key       string `json:"key"`
	DagID     string `json:"dag_id"`
	RunID     string `json:"run_id"`
	TaskID    string `json:"task_id"`
	MapIndex  int    `json:"map_index"`
	Timestamp string `json:"timestamp"`
}

type listXComInput struct {
	DagRunParam
	Page
	TaskID   string        `path:"task_id" doc:"task id"`
	MapIndex optional[int] `query:"map_index" doc:"only entries of this map index (default: every map index)"`
}

type xcomInput struct {
	TaskInstanceParam
	Key string `path:"xcom_key" doc:"XCom key, e.g. return_value"`
}

func (s *server) registerXCom() {
	tags := []string{"XCom"}
	base := Prefix + "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/xcomEntries"
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_xcom_entries", Method: http.MethodGet, Path: base, Tags: tags,
		Summary: "List a task's XCom entries", Description: listDoc("Lists a task's XCom entries without their values; \"~\" for the dag_id, "+
			"dag_run_id or task_id lists those of every DAG, run or task.", store.XComOrder),
		Errors: []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.listXCom)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_xcom_entry", Method: http.MethodGet, Path: base + "/{xcom_key}", Tags: tags,
		Summary: "Get an XCom entry with its value", Errors: []int{http.StatusNotFound},
	}, s.getXCom)
}

func (s *server) listXCom(ctx context.Context, in *listXComInput) (*struct{ Body XComCollection }, error) {
	p := &store.XComListParams{DagID: in.DagID, RunID: in.RunID, TaskID: in.TaskID, Page: in.store()}
	switch {
	case in.DagID != AllDags && in.RunID != AllRuns:
		if _, err := s.dagRun(ctx, in.DagID, in.RunID); err != nil {
			return nil, s.problem(ctx, err)
		}
	case in.DagID != AllDags:
		if _, err := s.dag(ctx, in.DagID); err != nil {
			return nil, s.problem(ctx, err)
		}
		p.RunID = ""
	default:
		p.DagID = ""
		if in.RunID == AllRuns {
			p.RunID = ""
		}
	}
	if in.TaskID == "~" {
		p.TaskID = ""
	}
	if in.MapIndex.IsSet {
		p.MapIndex = &in.MapIndex.Value
	}
	xs, total, err := listOf(ctx, s, p, s.st.XComList, s.st.XComCount)
	if err != nil {
		return nil, err
	}
	entries := make([]XComEntry, len(xs))
	for i, x := range xs {
		entries[i] = XComEntry{Key: x.Key, DagID: x.DagID, RunID: x.RunID, TaskID: x.TaskID,
			MapIndex: x.MapIndex, Timestamp: x.Timestamp.UTC().Format("2006-01-02T15:04:05.999999Z07:00")}
	}
	return &struct{ Body XComCollection }{XComCollection{XComEntries: entries, TotalEntries: total}}, nil
}

func (s *server) getXCom(ctx context.Context, in *xcomInput) (*struct{ Body core.XCom }, error) {
	x, err := s.st.XComGet(ctx, in.DagID, in.RunID, in.TaskID, in.MapIndex, in.Key)
	if err != nil {
		return nil, s.problem(ctx, fmt.Errorf("XCom key %q of task_id %q map_index %d in dag_id %q dag_run_id %q: %w",
			in.Key, in.TaskID, in.MapIndex, in.DagID, in.RunID, err))
	}
	return &struct{ Body core.XCom }{*x}, nil
}
