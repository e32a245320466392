package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/job"
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

// DagProcessorHealth is the DAG processors' status and latest heartbeat
// (Airflow 3's dag_processor); the status is null when none ever ran.
type DagProcessorHealth struct {
	Status                      *string    `json:"status" enum:"healthy,unhealthy"`
	LatestDagProcessorHeartbeat *time.Time `json:"latest_dag_processor_heartbeat"`
}

// RoleInstance is one process of a role, as its job row tells it.
type RoleInstance struct {
	Role     string `json:"role" doc:"scheduler, dag-processor, triggerer, api-server or worker"`
	ID       string `json:"id" doc:"the process's job row id (a worker process's id per start)"`
	Hostname string `json:"hostname"`
	PID      int    `json:"pid"`
	// WorkerID is a worker process's worker name.
	WorkerID        string    `json:"worker_id,omitempty" doc:"a worker process's worker name (its credential's subject)"`
	Version         string    `json:"version" doc:"the Weir version the process runs; empty when it did not say"`
	StartedAt       time.Time `json:"started_at"`
	LatestHeartbeat time.Time `json:"latest_heartbeat"`
	// HeartbeatIntervalSeconds is how often the process beats; 0 = unknown.
	HeartbeatIntervalSeconds float64 `json:"heartbeat_interval_seconds"`
	State                    string  `json:"state" enum:"healthy,stale" doc:"healthy: its latest heartbeat is within two of its intervals (and never less than the health threshold); stale: it stopped beating (stopped, dead or cut off from the database). Stale rows are pruned after [core] job_retention"`
}

// HealthInfo is the body of GET /api/v2/monitor/health, as Airflow shapes
// it, with every role instance listed.
type HealthInfo struct {
	Metadatabase ComponentHealth    `json:"metadatabase"`
	Scheduler    SchedulerHealth    `json:"scheduler"`
	Triggerer    TriggererHealth    `json:"triggerer"`
	DagProcessor DagProcessorHealth `json:"dag_processor"`
	// Instances lists every process with a job row, by role.
	Instances []RoleInstance `json:"instances" doc:"every process of every role with its latest heartbeat, host, version and state, ordered scheduler, dag-processor, triggerer, api-server, worker"`
}

// HealthOutput wraps HealthInfo.
type HealthOutput struct{ Body HealthInfo }

// VersionInfo is the body of GET /api/v2/version.
type VersionInfo struct {
	Version    string  `json:"version"`
	GitVersion *string `json:"git_version" doc:"the commit the binary was built from; null when the build recorded none (as Airflow's)"`
}

// VersionOutput wraps VersionInfo.
type VersionOutput struct{ Body VersionInfo }

func (s *server) registerMonitor() {
	register(s, core.RolePublic, huma.Operation{
		OperationID: "get_health", Method: http.MethodGet, Path: Prefix + "/monitor/health", Tags: []string{"Monitor"},
		Summary: "Get health",
		Description: "Reports whether the metadata database answers, whether the latest scheduler, triggerer and DAG " +
			"processor heartbeats are recent, and lists every role instance (schedulers, DAG processors, triggerers, " +
			"api-servers, workers) with its last heartbeat, host, version and state. Needs no authentication.",
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
		Instances:    []RoleInstance{},
	}}
	jobs, err := s.st.JobList(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "health: list jobs", "err", err)
		out.Body.Metadatabase.Status = StatusUnhealthy
		return out, nil
	}
	h := &out.Body
	judged := job.Judge(jobs, s.clk.Now(), s.cfg.SchedulerHealthThreshold)
	sched := judged.Role(job.SchedulerRole)
	h.Scheduler.LatestSchedulerHeartbeat = sched.Latest
	if sched.Healthy > 0 {
		h.Scheduler.Status = StatusHealthy
	}
	h.Triggerer.Status, h.Triggerer.LatestTriggererHeartbeat = roleStatus(judged.Role(job.TriggererRole))
	h.DagProcessor.Status, h.DagProcessor.LatestDagProcessorHeartbeat = roleStatus(judged.Role(job.DagProcessorRole))
	for _, in := range judged.Instances {
		h.Instances = append(h.Instances, RoleInstance{Role: in.Role, ID: in.ID, Hostname: in.Hostname, PID: in.PID,
			WorkerID: in.WorkerID, Version: in.Version, StartedAt: in.StartedAt.UTC(), LatestHeartbeat: in.Heartbeat.UTC(),
			HeartbeatIntervalSeconds: in.Interval.Seconds(), State: in.State})
	}
	return out, nil
}

// roleStatus is an optional role's status (nil when it never ran, as
// Airflow reports a triggerer) and its latest heartbeat.
func roleStatus(r job.RoleHealth) (*string, *time.Time) {
	if r.Latest == nil {
		return nil, nil
	}
	status := StatusUnhealthy
	if r.Healthy > 0 {
		status = StatusHealthy
	}
	return &status, r.Latest
}

func (s *server) version(_ context.Context, _ *struct{}) (*VersionOutput, error) {
	v := VersionInfo{Version: s.cfg.Version}
	if s.cfg.GitVersion != "" {
		v.GitVersion = &s.cfg.GitVersion
	}
	return &VersionOutput{Body: v}, nil
}
