package api_test

import (
	"net/http"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func TestBackfillRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	daily := etlDAG()
	daily.DagID, daily.Schedule = "daily", "@daily"
	e.syncDag(daily)
	body := map[string]any{"dag_id": "daily", "from_date": "2026-02-01T00:00:00Z", "to_date": "2026-02-05T00:00:00Z",
		"max_active_runs": 2, "run_backwards": true, "dag_run_conf": map[string]any{"x": 1}}

	var dry api.DryRunBackfillCollection
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/backfills/dry_run", body, &dry)
	if dry.TotalEntries != 5 || dry.Backfills[0].LogicalDate.Format("2006-01-02") != "2026-02-05" {
		t.Errorf("dry run = %+v, want 5 dates newest first", dry)
	}
	if n, _ := e.st.DagRunCount(t.Context(), &store.DagRunListParams{}); n != 0 {
		t.Errorf("a dry run made %d runs", n)
	}

	var b api.BackfillResponse
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/backfills", body, &b)
	if b.DagID != "daily" || b.MaxActiveRuns != 2 || b.ReprocessBehavior != core.ReprocessNone || b.IsPaused ||
		b.CompletedAt != nil || string(b.DagRunConf) != `{"x":1}` || b.DagDisplayName != "daily" {
		t.Errorf("created backfill = %+v", b)
	}
	var runs api.DAGRunCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/daily/dagRuns?run_type=backfill", nil, &runs)
	if runs.TotalEntries != 5 || runs.DagRuns[0].BackfillID == nil || *runs.DagRuns[0].BackfillID != b.ID ||
		runs.DagRuns[0].State != core.RunQueued {
		t.Errorf("backfill runs = %+v, want 5 queued runs of backfill %d", runs, b.ID)
	}
	if !e.hasAudit("op", "backfill.create", "daily/1") {
		t.Errorf("no audit entry: %+v", e.audit())
	}
	e.mustProblem(http.StatusConflict, core.RoleOp, "POST", "/api/v2/backfills", body, "still in progress")

	var list api.BackfillCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/backfills?dag_id=daily", nil, &list)
	if list.TotalEntries != 1 || list.Backfills[0].ID != b.ID {
		t.Errorf("list = %+v", list)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/backfills?dag_id=etl", nil, &list)
	if list.TotalEntries != 0 {
		t.Errorf("backfills of etl = %+v, want none", list)
	}

	e.must(http.StatusOK, core.RoleOp, "PUT", "/api/v2/backfills/1/pause", nil, &b)
	if !b.IsPaused {
		t.Errorf("paused backfill = %+v", b)
	}
	e.must(http.StatusOK, core.RoleOp, "PUT", "/api/v2/backfills/1/unpause", nil, &b)
	if b.IsPaused {
		t.Errorf("unpaused backfill = %+v", b)
	}
	e.must(http.StatusOK, core.RoleOp, "PUT", "/api/v2/backfills/1/cancel", nil, &b)
	if b.CompletedAt == nil || !b.IsPaused {
		t.Errorf("cancelled backfill = %+v", b)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/daily/dagRuns?run_type=backfill&state=failed", nil, &runs)
	if runs.TotalEntries != 5 {
		t.Errorf("after cancel, %d failed backfill runs, want the 5 never started", runs.TotalEntries)
	}
	e.mustProblem(http.StatusConflict, core.RoleOp, "PUT", "/api/v2/backfills/1/cancel", nil, "already completed")
	e.mustProblem(http.StatusConflict, core.RoleOp, "PUT", "/api/v2/backfills/1/unpause", nil, "already completed")
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/backfills/1", nil, &b)
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/backfills/99", nil, "backfill 99")

	// Bad requests name the problem and change nothing.
	for _, bad := range []struct {
		status int
		body   map[string]any
		want   string
	}{
		{http.StatusNotFound, map[string]any{"dag_id": "nope", "from_date": "2026-02-01T00:00:00Z", "to_date": "2026-02-02T00:00:00Z"}, `"nope"`},
		{http.StatusBadRequest, map[string]any{"dag_id": "etl", "from_date": "2026-02-01T00:00:00Z", "to_date": "2026-02-02T00:00:00Z"}, "has no schedule"},
		{http.StatusBadRequest, map[string]any{"dag_id": "daily", "from_date": "2026-02-03T00:00:00Z", "to_date": "2026-02-02T00:00:00Z"}, "before from_date"},
		{http.StatusUnprocessableEntity, map[string]any{"dag_id": "daily", "from_date": "2026-02-01T00:00:00Z", "to_date": "2026-02-02T00:00:00Z",
			"reprocess_behavior": "all"}, "reprocess_behavior"},
	} {
		e.mustProblem(bad.status, core.RoleOp, "POST", "/api/v2/backfills", bad.body, bad.want)
	}
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "POST", "/api/v2/backfills", body, "")
	if n, _ := e.st.BackfillCount(t.Context(), &store.BackfillListParams{}); n != 1 {
		t.Errorf("%d backfills after bad requests, want 1", n)
	}
}
