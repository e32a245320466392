package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
)

// DagDefinition is a DAG's latest version as the DAG processor serialized
// it (Weir's addition; `weir dags show`).
type DagDefinition struct {
	DagID         string   `json:"dag_id"`
	VersionNumber int      `json:"version_number"`
	Definition    core.DAG `json:"definition"`
}

// NextRun is one of a DAG's next scheduled runs: its logical date and
// data interval.
type NextRun struct {
	LogicalDate       time.Time `json:"logical_date"`
	DataIntervalStart time.Time `json:"data_interval_start"`
	DataIntervalEnd   time.Time `json:"data_interval_end"`
}

// NextRunCollection lists a DAG's next scheduled runs (Weir's addition;
// `weir dags next-execution`).
type NextRunCollection struct {
	DagID    string    `json:"dag_id"`
	IsPaused bool      `json:"is_paused"`
	NextRuns []NextRun `json:"next_runs"`
}

type nextRunsInput struct {
	DagIDParam
	Limit int `query:"limit" minimum:"1" maximum:"1000" default:"1" doc:"how many of the next runs"`
}

func (s *server) registerDagDefinition() {
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_dag_definition", Method: http.MethodGet, Path: Prefix + "/dags/{dag_id}/definition", Tags: []string{"DAG"},
		Summary:     "Get a DAG's latest definition",
		Description: "The DAG's latest version as the DAG processor serialized it: schedule, tasks, assets, params (Weir's addition).",
		Errors:      []int{http.StatusNotFound},
	}, s.getDagDefinition)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_dag_next_runs", Method: http.MethodGet, Path: Prefix + "/dags/{dag_id}/nextRuns", Tags: []string{"DAG"},
		Summary: "List a DAG's next scheduled runs",
		Description: "The logical dates and data intervals of the DAG's next scheduled runs after its latest scheduled one, by its " +
			"latest version's schedule, start and end dates and catchup; none without a schedule or past the end date (Weir's addition).",
		Errors: []int{http.StatusNotFound},
	}, s.getDagNextRuns)
}

func (s *server) getDagDefinition(ctx context.Context, in *DagIDParam) (*struct{ Body DagDefinition }, error) {
	v, err := s.st.DagVersionLatest(ctx, in.DagID)
	if err != nil {
		return nil, s.problem(ctx, fmt.Errorf("dag_id %q: %w", in.DagID, err))
	}
	return &struct{ Body DagDefinition }{DagDefinition{DagID: in.DagID, VersionNumber: v.Version, Definition: v.Spec}}, nil
}

func (s *server) getDagNextRuns(ctx context.Context, in *nextRunsInput) (*struct{ Body NextRunCollection }, error) {
	d, err := s.dag(ctx, in.DagID)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	ivs, err := s.svc.NextDataIntervals(ctx, in.DagID, in.Limit)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	out := NextRunCollection{DagID: d.DagID, IsPaused: d.IsPaused, NextRuns: make([]NextRun, len(ivs))}
	for i, iv := range ivs {
		out.NextRuns[i] = NextRun{LogicalDate: iv.Start, DataIntervalStart: iv.Start, DataIntervalEnd: iv.End}
	}
	return &struct{ Body NextRunCollection }{out}, nil
}
