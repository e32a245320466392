package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagsource"
)

// DagSourceResponse is a DAG's file (Airflow's DAGSourceResponse).
type DagSourceResponse struct {
	Content        string `json:"content"`
	DagID          string `json:"dag_id"`
	VersionNumber  int    `json:"version_number"`
	DagDisplayName string `json:"dag_display_name"`
	// Truncated says the file is longer than the first MiB shown.
	Truncated bool `json:"truncated"`
}

type dagSourceInput struct {
	DagIDParam
	VersionNumber int `query:"version_number" minimum:"0" doc:"the latest version's number, or 0 (the default): Weir serves the file as it is now, so only the latest version has a source"`
}

func (s *server) registerDagSources() {
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_dag_source", Method: http.MethodGet, Path: Prefix + "/dagSources/{dag_id}", Tags: []string{"DagSource"},
		Summary: "Get a DAG's source file",
		Description: "The file the DAG's latest version was loaded from, read from the DAGs folder (only a file inside it; the " +
			"first MiB). 404 says why there is none: a DAG defined in Go, a file outside the folder or not on this server, " +
			"or an earlier version_number.",
		Errors: []int{http.StatusNotFound},
	}, s.getDagSource)
}

func (s *server) getDagSource(ctx context.Context, in *dagSourceInput) (*struct{ Body DagSourceResponse }, error) {
	v, err := s.st.DagVersionLatest(ctx, in.DagID)
	if err != nil {
		return nil, s.problem(ctx, fmt.Errorf("dag_id %q: %w", in.DagID, err))
	}
	if in.VersionNumber != 0 && in.VersionNumber != v.Version {
		return nil, s.problem(ctx, fmt.Errorf("dag_id %q version_number %d: Weir keeps no source per version; the file is served for the latest version, %d: %w",
			in.DagID, in.VersionNumber, v.Version, core.ErrNotFound))
	}
	src, truncated, err := dagsource.Read(s.cfg.DagsFolder, v.Spec.FileLoc)
	switch {
	case errors.Is(err, dagsource.ErrNoSource):
		return nil, s.problem(ctx, fmt.Errorf("dag_id %q has no source to show: %w: %w", in.DagID, err, core.ErrNotFound))
	case err != nil:
		s.log.ErrorContext(ctx, "read dag source", "dag_id", in.DagID, "err", err)
		return nil, s.problem(ctx, fmt.Errorf("dag_id %q: the DAG file could not be read; the api-server log says why", in.DagID))
	}
	return &struct{ Body DagSourceResponse }{DagSourceResponse{Content: src, DagID: in.DagID, VersionNumber: v.Version,
		DagDisplayName: in.DagID, Truncated: truncated}}, nil
}
