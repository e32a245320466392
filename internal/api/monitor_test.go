package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// The health listing names every role instance with its host, version,
// latest heartbeat and state: a worker that stopped beating two of its
// intervals (and past the threshold) is stale while the others are
// healthy; the DAG processor has its own Airflow-shaped status.
func TestHealthListsEveryRoleInstance(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := e.clk.Now()
	rows := []core.Job{
		{ID: "w-live", Role: "worker", Hostname: "m2", PID: 5, StartedAt: now.Add(-time.Hour), Heartbeat: now.Add(-4 * time.Second),
			WorkerID: "w1", Interval: 5 * time.Second, Version: "1.4.0"},
		{ID: "w-dead", Role: "worker", Hostname: "m3", PID: 6, StartedAt: now.Add(-time.Hour), Heartbeat: now.Add(-2 * time.Minute),
			WorkerID: "w2", Interval: 5 * time.Second, Version: "1.3.0"},
		{ID: "api1", Role: "api-server", Hostname: "m1", PID: 2, StartedAt: now, Heartbeat: now, Interval: 2 * time.Second, Version: "1.4.0"},
		{ID: "dp1", Role: "dag-processor", Hostname: "m1", PID: 1, StartedAt: now, Heartbeat: now.Add(-time.Second), Interval: 5 * time.Second, Version: "1.4.0"},
		{ID: "s1", Role: "scheduler", Hostname: "m1", PID: 1, StartedAt: now, Heartbeat: now.Add(-time.Second), Interval: time.Second, Version: "1.4.0"},
	}
	for i := range rows {
		if err := e.st.JobHeartbeat(t.Context(), &rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	var h api.HealthInfo
	e.must(http.StatusOK, core.RolePublic, "GET", "/api/v2/monitor/health", nil, &h)
	var got []string
	for _, in := range h.Instances {
		got = append(got, fmt.Sprintf("%s %s %s pid=%d v=%s %s every=%gs worker=%s", in.Role, in.ID, in.Hostname, in.PID, in.Version,
			in.State, in.HeartbeatIntervalSeconds, in.WorkerID))
	}
	want := []string{
		"scheduler s1 m1 pid=1 v=1.4.0 healthy every=1s worker=",
		"dag-processor dp1 m1 pid=1 v=1.4.0 healthy every=5s worker=",
		"api-server api1 m1 pid=2 v=1.4.0 healthy every=2s worker=",
		"worker w-live m2 pid=5 v=1.4.0 healthy every=5s worker=w1",
		"worker w-dead m3 pid=6 v=1.3.0 stale every=5s worker=w2",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("instances (-want +got):\n%s", diff)
	}
	if in := h.Instances[4]; !in.LatestHeartbeat.Equal(now.Add(-2*time.Minute)) || !in.StartedAt.Equal(now.Add(-time.Hour)) {
		t.Errorf("dead worker's times: %+v", in)
	}
	if h.DagProcessor.Status == nil || *h.DagProcessor.Status != "healthy" || h.Triggerer.Status != nil || h.Scheduler.Status != "healthy" {
		t.Errorf("role statuses: scheduler %+v, dag processor %+v, triggerer %+v (never ran: null)", h.Scheduler, h.DagProcessor, h.Triggerer)
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
	// Airflow's shape: git_version always there, null when unknown.
	if status, b := e.call(core.RolePublic, "GET", "/api/v2/version", nil); status != http.StatusOK || !strings.Contains(string(b), `"git_version":null`) {
		t.Errorf("GET /version without a recorded commit: %d %s, want git_version null", status, b)
	}
}
