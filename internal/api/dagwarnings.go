package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// DagWarningCollection is a page of DAG warnings.
type DagWarningCollection struct {
	DagWarnings  []core.DagWarning `json:"dag_warnings"`
	TotalEntries int               `json:"total_entries"`
}

type listDagWarningsInput struct {
	DagID       string `query:"dag_id" doc:"only this DAG's warnings"`
	WarningType string `query:"warning_type" doc:"only warnings of this type, such as \"unquoted trigger data\""`
	Page
}

// registerDagWarnings serves Airflow's GET /dagWarnings: problems found in
// DAGs that still load (docs/security.md#dag-files).
func (s *server) registerDagWarnings() {
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "list_dag_warnings", Method: http.MethodGet, Path: Prefix + "/dagWarnings", Tags: []string{"DagWarning"},
		Summary: "List DAG warnings",
		Description: listDoc("Lists problems the DAG processor found in DAGs that still load, such as a bash_command "+
			"that prints trigger data (params, conf) without shquote.", store.DagWarningOrder),
		Errors: []int{http.StatusBadRequest},
	}, s.listDagWarnings)
}

func (s *server) listDagWarnings(ctx context.Context, in *listDagWarningsInput) (*struct{ Body DagWarningCollection }, error) {
	p := &store.DagWarningListParams{DagID: in.DagID, WarningType: in.WarningType, Page: in.store()}
	list, total, err := listOf(ctx, s, p, s.st.DagWarningList, s.st.DagWarningCount)
	if err != nil {
		return nil, err
	}
	return &struct{ Body DagWarningCollection }{DagWarningCollection{DagWarnings: list, TotalEntries: total}}, nil
}
