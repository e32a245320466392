package cli

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/schedule"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// The backfill commands' backend methods (weir dags backfill, weir
// backfills ...), local and REST.

// DagGet implements backend.
func (b *localBackend) DagGet(ctx context.Context, dagID string) (*core.DagModel, error) {
	d, err := b.svc.Store().DagGet(ctx, dagID)
	if err != nil {
		return nil, fmt.Errorf("dag_id %q: %w", dagID, err)
	}
	return d, nil
}

// BackfillCreate implements backend.
func (b *localBackend) BackfillCreate(ctx context.Context, r runs.BackfillRequest) (*service.BackfillResult, error) {
	return b.svc.CreateBackfill(ctx, b.actor, r)
}

// BackfillList implements backend.
func (b *localBackend) BackfillList(ctx context.Context, p *store.BackfillListParams) ([]core.Backfill, int, error) {
	return store.List(ctx, p, b.svc.Store().BackfillList, b.svc.Store().BackfillCount)
}

// BackfillGet implements backend.
func (b *localBackend) BackfillGet(ctx context.Context, id int64) (*core.Backfill, error) {
	return b.svc.Store().BackfillGet(ctx, id)
}

// BackfillAction implements backend.
func (b *localBackend) BackfillAction(ctx context.Context, id int64, action string) (*core.Backfill, error) {
	switch action {
	case "pause", "unpause":
		return b.svc.PauseBackfill(ctx, b.actor, id, action == "pause")
	}
	return b.svc.CancelBackfill(ctx, b.actor, id)
}

// DagGet implements backend (GET /dags/{dag_id}).
func (b *restBackend) DagGet(ctx context.Context, dagID string) (*core.DagModel, error) {
	var d api.DAGDetails
	if err := b.c.Get(ctx, "/dags/"+seg(dagID), nil, &d); err != nil {
		return nil, err
	}
	dag := d.Dag()
	return &dag, nil
}

// BackfillCreate implements backend: the plan from POST
// /backfills/dry_run, then (unless a dry run) the backfill from POST
// /backfills.
func (b *restBackend) BackfillCreate(ctx context.Context, r runs.BackfillRequest) (*service.BackfillResult, error) {
	body := api.BackfillPostBody{DagID: r.DagID, FromDate: r.From, ToDate: r.To, RunBackwards: r.RunBackwards,
		DagRunConf: r.DagRunConf, ReprocessBehavior: string(r.Reprocess), MaxActiveRuns: r.MaxActiveRuns}
	var plan api.DryRunBackfillCollection
	if err := b.c.Do(ctx, http.MethodPost, "/backfills/dry_run", nil, body, &plan); err != nil {
		return nil, err
	}
	res := &service.BackfillResult{Steps: make([]runs.BackfillStep, len(plan.Plan))}
	for i, st := range plan.Plan {
		res.Steps[i] = runs.BackfillStep{Interval: schedule.Interval{Start: st.LogicalDate}, Action: st.Action, Reason: st.Reason}
		if st.ExistingRunID != "" {
			res.Steps[i].Existing = &core.DagRun{RunID: st.ExistingRunID, State: st.ExistingState}
		}
	}
	if r.DryRun {
		return res, nil
	}
	var created api.BackfillResponse
	if err := b.c.Do(ctx, http.MethodPost, "/backfills", nil, body, &created); err != nil {
		return nil, err
	}
	res.Backfill = &created.Backfill
	return res, nil
}

// BackfillList implements backend.
func (b *restBackend) BackfillList(ctx context.Context, p *store.BackfillListParams) ([]core.Backfill, int, error) {
	q := pageQuery(p.Page)
	if p.DagID != "" {
		q.Set("dag_id", p.DagID)
	}
	var out api.BackfillCollection
	if err := b.c.Get(ctx, "/backfills", q, &out); err != nil {
		return nil, 0, err
	}
	list := make([]core.Backfill, len(out.Backfills))
	for i, r := range out.Backfills {
		list[i] = r.Backfill
	}
	return list, out.TotalEntries, nil
}

// BackfillGet implements backend.
func (b *restBackend) BackfillGet(ctx context.Context, id int64) (*core.Backfill, error) {
	var out api.BackfillResponse
	if err := b.c.Get(ctx, "/backfills/"+strconv.FormatInt(id, 10), nil, &out); err != nil {
		return nil, err
	}
	return &out.Backfill, nil
}

// BackfillAction implements backend (PUT /backfills/{id}/pause|unpause|cancel).
func (b *restBackend) BackfillAction(ctx context.Context, id int64, action string) (*core.Backfill, error) {
	var out api.BackfillResponse
	if err := b.c.Do(ctx, http.MethodPut, "/backfills/"+strconv.FormatInt(id, 10)+"/"+action, nil, nil, &out); err != nil {
		return nil, err
	}
	return &out.Backfill, nil
}
