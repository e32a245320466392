package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
)

// TestDeferredTryShowsItsTrigger: a deferred task instance shows its
// trigger (type, kwargs with secrets masked, created, triggerer) and its
// timeout; GET /triggers lists it with its assignment.
func TestDeferredTryShowsItsTrigger(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := e.trigger("etl")
	ti, err := e.st.TaskInstanceGetByKey(t.Context(), "etl", run.RunID, "extract", core.NoMapIndex)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: e.st, Clock: e.clk})
	kwargs := json.RawMessage(`{"url":"https://bob:hunter2@example.com/ready","headers":{"Authorization":"Bearer xyz"}}`)
	if _, err := svc.StartFromTrigger(t.Context(), ti, core.Deferral{Trigger: core.TriggerSpec{Type: "http", Kwargs: kwargs},
		Timeout: core.Duration(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	var got core.TaskInstance
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns/"+run.RunID+"/taskInstances/extract", nil, &got)
	if got.State != core.TIDeferred || got.Trigger == nil || got.Trigger.Type != "http" || got.TriggerTimeout == nil ||
		!got.TriggerTimeout.Equal(e.clk.Now().Add(time.Hour)) {
		t.Fatalf("deferred task instance = %+v, want deferred with its http trigger and a timeout in 1h", got)
	}
	for _, secret := range []string{"hunter2", "Bearer xyz"} {
		if strings.Contains(string(got.Trigger.Kwargs), secret) {
			t.Errorf("trigger kwargs %s show a secret", got.Trigger.Kwargs)
		}
	}
	var list api.TriggerCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/triggers", nil, &list)
	if list.TotalEntries != 1 || list.Triggers[0].ID != *got.TriggerID || list.Triggers[0].TriggererID != "" ||
		strings.Contains(string(list.Triggers[0].Kwargs), "hunter2") {
		t.Errorf("triggers = %+v, want the one unassigned trigger, masked", list)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/triggers?triggerer_id=t1", nil, &list)
	if list.TotalEntries != 0 {
		t.Errorf("triggers of triggerer t1 = %+v, want none", list)
	}
	e.mustProblem(http.StatusBadRequest, core.RoleViewer, "GET", "/api/v2/triggers?order_by=kwargs", nil, "order_by")
}

func TestHealthShowsTheTriggerer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var h api.HealthInfo
	e.must(http.StatusOK, core.RolePublic, "GET", "/api/v2/monitor/health", nil, &h)
	if h.Triggerer.Status != nil || h.Triggerer.LatestTriggererHeartbeat != nil {
		t.Errorf("no triggerer ever ran: %+v, want a null status", h.Triggerer)
	}
	hb := e.clk.Now().Add(-5 * time.Second)
	if err := e.st.JobHeartbeat(t.Context(), &core.Job{ID: "t1", Role: "triggerer", Hostname: "h", PID: 1, StartedAt: hb, Heartbeat: hb}); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusOK, core.RolePublic, "GET", "/api/v2/monitor/health", nil, &h)
	if h.Triggerer.Status == nil || *h.Triggerer.Status != "healthy" || !h.Triggerer.LatestTriggererHeartbeat.Equal(hb) {
		t.Errorf("recent triggerer heartbeat: %+v", h.Triggerer)
	}
	e.clk.Advance(time.Minute)
	e.must(http.StatusOK, core.RolePublic, "GET", "/api/v2/monitor/health", nil, &h)
	if h.Triggerer.Status == nil || *h.Triggerer.Status != "unhealthy" {
		t.Errorf("stale triggerer heartbeat: %+v", h.Triggerer)
	}
}
