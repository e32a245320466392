package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// ImportErrorCollection is a page of DAG file import errors.
type ImportErrorCollection struct {
	ImportErrors []ImportErrorResponse `json:"import_errors"`
	TotalEntries int                   `json:"total_entries"`
}

// ImportErrorResponse is an import error as Airflow 3's REST API shows it.
type ImportErrorResponse struct {
	core.ImportError
	BundleName *string `json:"bundle_name" doc:"always null: Weir has no DAG bundles"`
}

// importErrorResponses are errs as the REST API shows them.
func importErrorResponses(errs []core.ImportError) []ImportErrorResponse {
	out := make([]ImportErrorResponse, len(errs))
	for i := range errs {
		out[i] = ImportErrorResponse{ImportError: errs[i]}
	}
	return out
}

type listImportErrorsInput struct{ Page }

type importErrorInput struct {
	ID int64 `path:"import_error_id" doc:"import error id"`
}

func (s *server) registerImportErrors() {
	tags := []string{"Import Error"}
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_import_errors", Method: http.MethodGet, Path: Prefix + "/importErrors", Tags: tags,
		Summary: "List DAG file import errors", Description: listDoc("Lists the DAG files that failed to load.", store.ImportErrorOrder),
		Errors: []int{http.StatusBadRequest},
	}, s.listImportErrors)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_import_error", Method: http.MethodGet, Path: Prefix + "/importErrors/{import_error_id}", Tags: tags,
		Summary: "Get a DAG file import error", Errors: []int{http.StatusNotFound},
	}, s.getImportError)
}

func (s *server) listImportErrors(ctx context.Context, in *listImportErrorsInput) (*struct{ Body ImportErrorCollection }, error) {
	list, total, err := listOf(ctx, s, &store.ImportErrorListParams{Page: in.store()}, s.st.ImportErrorList, s.st.ImportErrorCount)
	if err != nil {
		return nil, err
	}
	return &struct{ Body ImportErrorCollection }{ImportErrorCollection{ImportErrors: importErrorResponses(list), TotalEntries: total}}, nil
}

func (s *server) getImportError(ctx context.Context, in *importErrorInput) (*struct{ Body ImportErrorResponse }, error) {
	e, err := s.st.ImportErrorGet(ctx, in.ID)
	if err != nil {
		return nil, s.problem(ctx, fmt.Errorf("import_error_id %d: %w", in.ID, err))
	}
	return &struct{ Body ImportErrorResponse }{ImportErrorResponse{ImportError: *e}}, nil
}
