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

// HealthInfo is the body of GET /api/v2/health, as Airflow shapes it.
type HealthInfo struct {
	Metadatabase ComponentHealth `json:"metadatabase"`
	Scheduler    SchedulerHealth `json:"scheduler"`
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
		OperationID: "get_health", Method: http.MethodGet, Path: Prefix + "/health", Tags: []string{"Monitor"},
		Summary:     "Get health",
		Description: "Reports whether the metadata database answers and whether a scheduler heartbeat is recent. Needs no authentication.",
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
	for _, j := range jobs {
		if j.Role != "scheduler" {
			continue
		}
		if hb := out.Body.Scheduler.LatestSchedulerHeartbeat; hb == nil || j.Heartbeat.After(*hb) {
			t := j.Heartbeat.UTC()
			out.Body.Scheduler.LatestSchedulerHeartbeat = &t
		}
	}
	if hb := out.Body.Scheduler.LatestSchedulerHeartbeat; hb != nil && s.clk.Now().Sub(*hb) <= s.cfg.SchedulerHealthThreshold {
		out.Body.Scheduler.Status = StatusHealthy
	}
	return out, nil
}

func (s *server) version(_ context.Context, _ *struct{}) (*VersionOutput, error) {
	return &VersionOutput{Body: VersionInfo{Version: s.cfg.Version, GitVersion: s.cfg.GitVersion}}, nil
}
