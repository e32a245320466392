package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
)

func (s *server) registerDagDelete() {
	register(s, core.RoleOp, huma.Operation{
		OperationID: "delete_dag", Method: http.MethodDelete, Path: Prefix + "/dags/{dag_id}", Tags: []string{"DAG"},
		Summary: "Delete a DAG's metadata and history",
		Description: "Deletes the DAG's row, versions, runs, task instances and their tries, XCom, task state and backfills. " +
			"409 while a task instance of the DAG is queued, running or deferred. The DAG file is not touched: a DAG " +
			"whose file is still in the DAGs folder comes back, with no history, at the next scan.",
		DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound, http.StatusConflict},
	}, s.deleteDag)
}

func (s *server) deleteDag(ctx context.Context, in *DagIDParam) (*struct{}, error) {
	if _, err := s.svc.DeleteDag(ctx, actor(ctx), in.DagID); err != nil {
		return nil, s.problem(ctx, err)
	}
	return nil, nil
}
