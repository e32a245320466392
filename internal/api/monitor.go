package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/weirflow/weir/internal/core"
)

// Health statuses.
const (
	StatusHealthy   = "healthy"
	StatusUnhealthy = "unhealthy"
)

// ComponentHealth is one component's status.
type ComponentHealth struct {
	Status string `json:"status" enum:"healthy,unhealthy"`
}

// SchedulerHealth is the scheduler's status and latest heartbeat.
type SchedulerHealth struct {
	Status                   string     `json:"status" enum:"healthy,unhealthy"`
	LatestSchedulerHeartbeat *time.Time `json:"latest_scheduler_heartbeat"`
}

// TriggererHealth is the triggerers' status and latest heartbeat; the
// status is null when no triggerer ever ran (as in Airflow).
type TriggererHealth struct {
	Status                   *string    `json:"status" enum:"healthy,unhealthy"`
	LatestTriggererHeartbeat *time.Time `json:"latest_triggerer_heartbeat"`
}

// HealthInfo is the body of GET /api/v2/monitor/health, as Airflow shapes it.
type HealthInfo struct {
	Metadatabase ComponentHealth `json:"metadatabase"`
	Scheduler    SchedulerHealth `json:"scheduler"`
	Triggerer    TriggererHealth `json:"triggerer"`
}

// HealthOutput wraps HealthInfo.
type HealthOutput struct{ Body HealthInfo }

// VersionInfo is the body of GET /api/v2/version.
type VersionInfo struct {
	Version    string `json:"version"`
	GitVersion string `json:"git_version,omitempty"`
}

// VersionOutput wraps VersionInfo.
type VersionOutput struct{ Body VersionInfo }

func (s *server) registerMonitor() {
	register(s, core.RolePublic, huma.Operation{
		OperationID: "get_health", Method: http.MethodGet, Path: Prefix + "/monitor/health", Tags: []string{"Monitor"},
		Summary: "Get health",
		Description: "Reports whether the metadata database answers and whether the latest scheduler and triggerer " +
			"heartbeats are recent. Needs no authentication.",
	}, s.health)
	register(s, core.RolePublic, huma.Operation{
		OperationID: "get_health_short", Method: http.MethodGet, Path: Prefix + "/health", Tags: []string{"Monitor"},
		Summary: "Get health (same as /monitor/health)",
	}, s.health)
	register(s, core.RolePublic, huma.Operation{
		OperationID: "get_version", Method: http.MethodGet, Path: Prefix + "/version", Tags: []string{"Version"},
		Summary: "Get version",
	}, s.version)
}

func (s *server) health(ctx context.Context, _ *struct{}) (*HealthOutput, error) {
	out := &HealthOutput{Body: HealthInfo{
		Metadatabase: ComponentHealth{Status: StatusHealthy},
		Scheduler:    SchedulerHealth{Status: StatusUnhealthy},
	}}
	jobs, err := s.st.JobList(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "health: list jobs", "err", err)
		out.Body.Metadatabase.Status = StatusUnhealthy
		return out, nil
	}
	h := &out.Body
	h.Scheduler.LatestSchedulerHeartbeat = latestBeat(jobs, "scheduler")
	if s.recent(h.Scheduler.LatestSchedulerHeartbeat) {
		h.Scheduler.Status = StatusHealthy
	}
	if h.Triggerer.LatestTriggererHeartbeat = latestBeat(jobs, "triggerer"); h.Triggerer.LatestTriggererHeartbeat != nil {
		status := StatusUnhealthy
		if s.recent(h.Triggerer.LatestTriggererHeartbeat) {
			status = StatusHealthy
		}
		h.Triggerer.Status = &status
	}
	return out, nil
}

// latestBeat returns the latest heartbeat of a job of role, or nil.
func latestBeat(jobs []core.Job, role string) *time.Time {
	var latest *time.Time
	for _, j := range jobs {
		if j.Role == role && (latest == nil || j.Heartbeat.After(*latest)) {
			t := j.Heartbeat.UTC()
			latest = &t
		}
	}
	return latest
}

// recent reports whether a heartbeat is within the health threshold.
func (s *server) recent(hb *time.Time) bool {
	return hb != nil && s.clk.Now().Sub(*hb) <= s.cfg.SchedulerHealthThreshold
}

func (s *server) version(_ context.Context, _ *struct{}) (*VersionOutput, error) {
	return &VersionOutput{Body: VersionInfo{Version: s.cfg.Version, GitVersion: s.cfg.GitVersion}}, nil
}
