package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// BackfillResponse is a backfill as Airflow's REST API shows it.
type BackfillResponse struct {
	core.Backfill
	DagDisplayName string `json:"dag_display_name"`
}

// BackfillCollection is a page of backfills.
type BackfillCollection struct {
	Backfills    []BackfillResponse `json:"backfills"`
	TotalEntries int                `json:"total_entries"`
}

// DryRunBackfill is one logical date a backfill would run.
type DryRunBackfill struct {
	LogicalDate time.Time `json:"logical_date"`
}

// DryRunBackfillCollection lists the logical dates a backfill would run
// (create a run, or clear and rerun the existing one), in start order.
// Plan, Weir's addition, has every date of the range, skipped ones too.
type DryRunBackfillCollection struct {
	Backfills    []DryRunBackfill   `json:"backfills"`
	TotalEntries int                `json:"total_entries"`
	Plan         []BackfillPlanStep `json:"plan" doc:"every logical date of the range in start order, with what would be done there (Weir's addition; weir dags backfill prints it)"`
}

// BackfillPlanStep is one logical date of a backfill's plan: the action
// (create, clear or skip), why a date is skipped, and its existing run.
type BackfillPlanStep struct {
	LogicalDate   time.Time           `json:"logical_date"`
	Action        runs.BackfillAction `json:"action" enum:"create,clear,skip"`
	Reason        string              `json:"reason,omitempty"`
	ExistingRunID string              `json:"existing_run_id,omitempty"`
	ExistingState core.DagRunState    `json:"existing_state,omitempty"`
}

// BackfillPostBody asks for a backfill (Airflow's BackfillPostBody).
type BackfillPostBody struct {
	DagID             string          `json:"dag_id" doc:"the DAG to backfill"`
	FromDate          time.Time       `json:"from_date" doc:"first logical date (included)"`
	ToDate            time.Time       `json:"to_date" doc:"last logical date (included)"`
	RunBackwards      bool            `json:"run_backwards,omitempty" doc:"start the newest logical date first"`
	DagRunConf        json.RawMessage `json:"dag_run_conf,omitempty" doc:"a JSON object given to every run as its conf"`
	ReprocessBehavior string          `json:"reprocess_behavior,omitempty" enum:"none,failed,completed" doc:"what to do at a date that already has a finished run: none (keep it, the default), failed (rerun failed runs), completed (rerun failed and successful runs)"`
	MaxActiveRuns     int             `json:"max_active_runs,omitempty" minimum:"1" doc:"how many of the backfill's runs may run at once (default 10)"`
}

func (b *BackfillPostBody) request(dry bool) runs.BackfillRequest {
	return runs.BackfillRequest{DagID: b.DagID, From: b.FromDate, To: b.ToDate, RunBackwards: b.RunBackwards,
		DagRunConf: b.DagRunConf, Reprocess: core.ReprocessBehavior(b.ReprocessBehavior), MaxActiveRuns: b.MaxActiveRuns, DryRun: dry}
}

type listBackfillsInput struct {
	DagID string `query:"dag_id" doc:"only the backfills of this DAG"`
	Page
}

// BackfillParam names a backfill in the path.
type BackfillParam struct {
	BackfillID int64 `path:"backfill_id" doc:"backfill id"`
}

type backfillBody struct{ Body BackfillResponse }

func (s *server) registerBackfills() {
	tags := []string{"Backfill"}
	base := Prefix + "/backfills"
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "list_backfills", Method: http.MethodGet, Path: base, Tags: tags, Summary: "List backfills",
		Description: listDoc("Lists backfills, of one DAG with dag_id.", store.BackfillOrder),
		Errors:      []int{http.StatusBadRequest},
	}, s.listBackfills)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "create_backfill", Method: http.MethodPost, Path: base, Tags: tags, Summary: "Create a backfill",
		Description: "Creates a queued backfill run for each logical date of the DAG's schedule from from_date to to_date " +
			"that has no run (and, per reprocess_behavior, clears and reruns finished ones); the scheduler starts them " +
			"within max_active_runs. 409 while the DAG has a backfill not completed yet.",
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
	}, s.createBackfill)
	register(s, core.RoleOp, huma.Operation{
		OperationID: "create_backfill_dry_run", Method: http.MethodPost, Path: base + "/dry_run", Tags: tags,
		Summary:     "Dry-run a backfill",
		Description: "Lists the logical dates a backfill with this body would run, changing nothing.",
		Errors:      []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
	}, s.dryRunBackfill)
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_backfill", Method: http.MethodGet, Path: base + "/{backfill_id}", Tags: tags,
		Summary: "Get a backfill", Errors: []int{http.StatusNotFound},
	}, s.getBackfill)
	for _, op := range []struct {
		id, path, summary, desc string
		fn                      func(context.Context, *BackfillParam) (*backfillBody, error)
	}{
		{"pause_backfill", "pause", "Pause a backfill", "Its queued runs wait; running ones go on.", s.pauseBackfill},
		{"unpause_backfill", "unpause", "Unpause a backfill", "Its queued runs start again within max_active_runs.", s.unpauseBackfill},
		{"cancel_backfill", "cancel", "Cancel a backfill",
			"Pauses the backfill, marks its queued runs (not started) failed and completes it; running runs finish.", s.cancelBackfill},
	} {
		register(s, core.RoleOp, huma.Operation{
			OperationID: op.id, Method: http.MethodPut, Path: base + "/{backfill_id}/" + op.path, Tags: tags,
			Summary: op.summary, Description: op.desc + " 409 for a completed backfill.",
			Errors: []int{http.StatusNotFound, http.StatusConflict},
		}, op.fn)
	}
}

func backfillResponse(b *core.Backfill) BackfillResponse {
	return BackfillResponse{Backfill: *b, DagDisplayName: b.DagID}
}

func (s *server) listBackfills(ctx context.Context, in *listBackfillsInput) (*struct{ Body BackfillCollection }, error) {
	p := &store.BackfillListParams{DagID: in.DagID, Page: in.store()}
	list, total, err := listOf(ctx, s, p, s.st.BackfillList, s.st.BackfillCount)
	if err != nil {
		return nil, err
	}
	out := BackfillCollection{Backfills: make([]BackfillResponse, len(list)), TotalEntries: total}
	for i := range list {
		out.Backfills[i] = backfillResponse(&list[i])
	}
	return &struct{ Body BackfillCollection }{out}, nil
}

func (s *server) createBackfill(ctx context.Context, in *struct{ Body BackfillPostBody }) (*backfillBody, error) {
	res, err := s.svc.CreateBackfill(ctx, actor(ctx), in.Body.request(false))
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &backfillBody{backfillResponse(res.Backfill)}, nil
}

func (s *server) dryRunBackfill(ctx context.Context, in *struct{ Body BackfillPostBody }) (*struct{ Body DryRunBackfillCollection }, error) {
	res, err := s.svc.CreateBackfill(ctx, actor(ctx), in.Body.request(true))
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	out := DryRunBackfillCollection{Backfills: []DryRunBackfill{}, Plan: make([]BackfillPlanStep, len(res.Steps))}
	for i, st := range res.Steps {
		if st.Action != runs.BackfillSkip {
			out.Backfills = append(out.Backfills, DryRunBackfill{LogicalDate: st.Interval.Start})
		}
		out.Plan[i] = BackfillPlanStep{LogicalDate: st.Interval.Start, Action: st.Action, Reason: st.Reason}
		if st.Existing != nil {
			out.Plan[i].ExistingRunID, out.Plan[i].ExistingState = st.Existing.RunID, st.Existing.State
		}
	}
	out.TotalEntries = len(out.Backfills)
	return &struct{ Body DryRunBackfillCollection }{out}, nil
}

func (s *server) getBackfill(ctx context.Context, in *BackfillParam) (*backfillBody, error) {
	b, err := s.st.BackfillGet(ctx, in.BackfillID)
	return s.backfillAnswer(ctx, b, err)
}

func (s *server) pauseBackfill(ctx context.Context, in *BackfillParam) (*backfillBody, error) {
	b, err := s.svc.PauseBackfill(ctx, actor(ctx), in.BackfillID, true)
	return s.backfillAnswer(ctx, b, err)
}

func (s *server) unpauseBackfill(ctx context.Context, in *BackfillParam) (*backfillBody, error) {
	b, err := s.svc.PauseBackfill(ctx, actor(ctx), in.BackfillID, false)
	return s.backfillAnswer(ctx, b, err)
}

func (s *server) cancelBackfill(ctx context.Context, in *BackfillParam) (*backfillBody, error) {
	b, err := s.svc.CancelBackfill(ctx, actor(ctx), in.BackfillID)
	return s.backfillAnswer(ctx, b, err)
}

// backfillAnswer is a backfill operation's response: the backfill, or the
// problem err names.
func (s *server) backfillAnswer(ctx context.Context, b *core.Backfill, err error) (*backfillBody, error) {
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return &backfillBody{backfillResponse(b)}, nil
}
