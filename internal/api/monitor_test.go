package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

func TestHealth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var h api.HealthInfo
	e.must(http.StatusOK, core.RolePublic, "GET", "/api/v2/health", nil, &h)
	if h.Metadatabase.Status != "healthy" || h.Scheduler.Status != "unhealthy" || h.Scheduler.LatestSchedulerHeartbeat != nil {
		t.Errorf("no scheduler yet: %+v", h)
	}
	hb := e.clk.Now().Add(-10 * time.Second)
	if err := e.st.JobHeartbeat(t.Context(), &core.Job{ID: "s1", Role: "scheduler", Hostname: "h", PID: 1,
		StartedAt: hb, Heartbeat: hb}); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusOK, core.RolePublic, "GET", "/api/v2/health", nil, &h)
	if h.Scheduler.Status != "healthy" || h.Scheduler.LatestSchedulerHeartbeat == nil || !h.Scheduler.LatestSchedulerHeartbeat.Equal(hb) {
		t.Errorf("recent heartbeat: %+v", h.Scheduler)
	}
	e.clk.Advance(time.Minute)
	e.must(http.StatusOK, core.RolePublic, "GET", "/api/v2/health", nil, &h)
	if h.Scheduler.Status != "unhealthy" {
		t.Errorf("stale heartbeat: %+v", h.Scheduler)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var v api.VersionInfo
	e.must(http.StatusOK, core.RolePublic, "GET", "/api/v2/version", nil, &v)
	if v.Version != "1.2.3" {
		t.Errorf("version %+v", v)
	}
}
