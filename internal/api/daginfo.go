package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// TaskCollection lists the tasks of a DAG's latest version, in the DAG's
// order (Airflow's TaskCollectionResponse).
type TaskCollection struct {
	Tasks        []TaskResponse `json:"tasks"`
	TotalEntries int            `json:"total_entries"`
}

// DagVersionResponse is one version of a DAG (Airflow's
// DagVersionResponse; Weir has no DAG bundles, so the bundle fields are
// null).
type DagVersionResponse struct {
	ID             int64     `json:"id"`
	VersionNumber  int       `json:"version_number"`
	DagID          string    `json:"dag_id"`
	Hash           string    `json:"hash"`
	BundleName     *string   `json:"bundle_name"`
	BundleVersion  *string   `json:"bundle_version"`
	CreatedAt      time.Time `json:"created_at"`
	DagDisplayName string    `json:"dag_display_name"`
}

// DagVersionCollection is a page of a DAG's versions.
type DagVersionCollection struct {
	DagVersions  []DagVersionResponse `json:"dag_versions"`
	TotalEntries int                  `json:"total_entries"`
}

// DagStatsState is how many runs of a DAG are in one state.
type DagStatsState struct {
	State core.DagRunState `json:"state"`
	Count int              `json:"count"`
}

// DagStats is a DAG's run counts per state.
type DagStats struct {
	DagID          string          `json:"dag_id"`
	DagDisplayName string          `json:"dag_display_name"`
	Stats          []DagStatsState `json:"stats"`
}

// DagStatsCollection is Airflow's DagStatsCollectionResponse.
type DagStatsCollection struct {
	Dags         []DagStats `json:"dags"`
	TotalEntries int        `json:"total_entries"`
}

type taskInput struct {
	DagIDParam
	TaskID string `path:"task_id" doc:"task id"`
}

type dagVersionsInput struct {
	DagIDParam
	Page
}

type dagVersionInput struct {
	DagIDParam
	VersionNumber int `path:"version_number" doc:"the DAG's version number, from 1"`
}

type dagStatsInput struct {
	DagIDs []string `query:"dag_ids,explode" doc:"these DAGs (repeat the parameter, as Airflow's, or separate by commas); none = a page of the active DAGs"`
	Page
}

func (s *server) registerDagInfo() {
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_tasks", Method: http.MethodGet, Path: Prefix + "/dags/{dag_id}/tasks", Tags: []string{"Task"},
		Summary: "List a DAG's tasks", Description: "The tasks of the DAG's latest version, in the DAG's order.",
		Errors: []int{http.StatusNotFound},
	}, s.getTasks)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_task", Method: http.MethodGet, Path: Prefix + "/dags/{dag_id}/tasks/{task_id}", Tags: []string{"Task"},
		Summary: "Get a task of a DAG's latest version", Errors: []int{http.StatusNotFound},
	}, s.getTask)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_dag_versions", Method: http.MethodGet, Path: Prefix + "/dags/{dag_id}/dagVersions", Tags: []string{"DagVersion"},
		Summary:     "List a DAG's versions",
		Description: listDoc("A new version is recorded whenever the DAG's definition changes; each run keeps the version it started with.", store.DagVersionOrder),
		Errors:      []int{http.StatusBadRequest, http.StatusNotFound},
	}, s.getDagVersions)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_dag_version", Method: http.MethodGet, Path: Prefix + "/dags/{dag_id}/dagVersions/{version_number}",
		Tags: []string{"DagVersion"}, Summary: "Get a DAG version", Errors: []int{http.StatusNotFound},
	}, s.getDagVersion)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_dag_stats", Method: http.MethodGet, Path: Prefix + "/dagStats", Tags: []string{"DagStats"},
		Summary:     "Count each DAG's runs per state",
		Description: "For each DAG, how many runs are queued, running, success and failed (all four, zeros included). Unknown dag_ids are left out.",
		Errors:      []int{http.StatusBadRequest},
	}, s.getDagStats)
}

// latestTasks returns the tasks of a DAG's latest version as the API
// shows them.
func (s *server) latestTasks(ctx context.Context, dagID string) ([]TaskResponse, error) {
	d, err := s.dagDetails(ctx, dagID)
	if err != nil {
		return nil, err
	}
	return d.Tasks, nil
}

func (s *server) getTasks(ctx context.Context, in *DagIDParam) (*struct{ Body TaskCollection }, error) {
	tasks, err := s.latestTasks(ctx, in.DagID)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &struct{ Body TaskCollection }{TaskCollection{Tasks: tasks, TotalEntries: len(tasks)}}, nil
}

func (s *server) getTask(ctx context.Context, in *taskInput) (*struct{ Body TaskResponse }, error) {
	tasks, err := s.latestTasks(ctx, in.DagID)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	for _, t := range tasks {
		if t.TaskID == in.TaskID {
			return &struct{ Body TaskResponse }{t}, nil
		}
	}
	return nil, s.problem(ctx, fmt.Errorf("dag_id %q has no task %q in its latest version: %w", in.DagID, in.TaskID, core.ErrNotFound))
}

func versionResponse(v *core.DagVersion) DagVersionResponse {
	return DagVersionResponse{ID: v.ID, VersionNumber: v.Version, DagID: v.DagID, Hash: v.Hash, CreatedAt: v.CreatedAt,
		DagDisplayName: v.DagID}
}

func (s *server) getDagVersions(ctx context.Context, in *dagVersionsInput) (*struct{ Body DagVersionCollection }, error) {
	if _, err := s.dag(ctx, in.DagID); err != nil {
		return nil, s.problem(ctx, err)
	}
	list, total, err := listOf(ctx, s, &store.DagVersionListParams{DagID: in.DagID, Page: in.store()}, s.st.DagVersionList, s.st.DagVersionCount)
	if err != nil {
		return nil, err
	}
	out := DagVersionCollection{DagVersions: make([]DagVersionResponse, len(list)), TotalEntries: total}
	for i := range list {
		out.DagVersions[i] = versionResponse(&list[i])
	}
	return &struct{ Body DagVersionCollection }{out}, nil
}

func (s *server) getDagVersion(ctx context.Context, in *dagVersionInput) (*struct{ Body DagVersionResponse }, error) {
	v, err := s.st.DagVersionByNumber(ctx, in.DagID, in.VersionNumber)
	if err != nil {
		return nil, s.problem(ctx, fmt.Errorf("dag_id %q version_number %d: %w", in.DagID, in.VersionNumber, err))
	}
	return &struct{ Body DagVersionResponse }{versionResponse(v)}, nil
}

// statsStates are the run states dagStats counts, in Airflow's order.
var statsStates = []core.DagRunState{core.RunQueued, core.RunRunning, core.RunSuccess, core.RunFailed}

func (s *server) getDagStats(ctx context.Context, in *dagStatsInput) (*struct{ Body DagStatsCollection }, error) {
	var wanted []string
	for _, v := range in.DagIDs {
		wanted = append(wanted, strings.Split(v, ",")...)
	}
	p := &store.DagListParams{OnlyActive: len(wanted) == 0, DagIDs: wanted, Page: in.store()}
	dags, total, err := listOf(ctx, s, p, s.st.DagList, s.st.DagCount)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(dags))
	for i, d := range dags {
		ids[i] = d.DagID
	}
	counts, err := s.st.DagRunStateCounts(ctx, ids)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	out := DagStatsCollection{Dags: make([]DagStats, len(dags)), TotalEntries: total}
	for i, id := range ids {
		st := DagStats{DagID: id, DagDisplayName: id, Stats: make([]DagStatsState, len(statsStates))}
		for j, state := range statsStates {
			st.Stats[j] = DagStatsState{State: state, Count: counts[id][state]}
		}
		out.Dags[i] = st
	}
	return &struct{ Body DagStatsCollection }{out}, nil
}
