package cli

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/job"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/taskcli"
)

// healthCmd lists every role instance of the deployment, as GET
// /api/v2/monitor/health does.
func (a *app) healthCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "health",
		Short: "List every process of the deployment (schedulers, DAG processors, triggerers, api-servers, workers) with its last heartbeat, host, version and state; exit 1 when no scheduler is healthy",
		Example: "  weir health\n" +
			"  weir health --api-url https://weir.example.com   # through a deployment's REST API",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := a.health(cmd.Context())
			if err != nil {
				return err
			}
			if err := printHealth(cmd, h); err != nil {
				return err
			}
			if h.Role(job.SchedulerRole).Healthy == 0 {
				return &taskcli.ExitError{Code: 1, Err: fmt.Errorf("no scheduler is healthy")}
			}
			return nil
		},
	}
}

// health reads the job rows and judges them: through the REST API when
// one is configured, else from the local database.
func (a *app) health(ctx context.Context) (*job.Health, error) {
	if a.remote != nil {
		var body api.HealthInfo
		if err := a.remote.Get(ctx, "/monitor/health", nil, &body); err != nil {
			return nil, fmt.Errorf("read health: %w", err)
		}
		if body.Metadatabase.Status != api.StatusHealthy {
			return nil, fmt.Errorf("the api-server at %s cannot read its metadata database", a.remote.URL())
		}
		ins := make([]job.Instance, 0, len(body.Instances))
		for _, in := range body.Instances {
			ins = append(ins, job.Instance{State: in.State, Job: core.Job{ID: in.ID, Role: in.Role, Hostname: in.Hostname,
				PID: in.PID, StartedAt: in.StartedAt, Heartbeat: in.LatestHeartbeat, WorkerID: in.WorkerID, Version: in.Version,
				Interval: time.Duration(in.HeartbeatIntervalSeconds * float64(time.Second))}})
		}
		h := job.Summarize(ins)
		return &h, nil
	}
	var h job.Health
	err := a.withStore(ctx, func(_ *config.Config, st *sqlstore.Store) error {
		jobs, err := st.JobList(ctx)
		h = job.Judge(jobs, time.Now(), aliveThreshold) // the REST API's default threshold
		return err
	})
	return &h, err
}

// printHealth prints the per-role summary and then every instance.
func printHealth(cmd *cobra.Command, h *job.Health) error {
	out := cmd.OutOrStdout()
	var roles [][]string
	for _, r := range h.Roles {
		roles = append(roles, []string{r.Role, fmt.Sprintf("%d of %d", r.Healthy, r.Total), fmtTime(r.Latest)})
	}
	if err := table(out, []string{"ROLE", "HEALTHY", "LATEST HEARTBEAT"}, roles); err != nil {
		return err
	}
	fmt.Fprintln(out)
	var rows [][]string
	for _, in := range h.Instances {
		rows = append(rows, []string{in.Role, in.ID, orDash(in.WorkerID), in.Hostname, strconv.Itoa(in.PID), orDash(in.Version),
			fmtTime(&in.StartedAt), fmtTime(&in.Heartbeat), in.State})
	}
	return table(out, []string{"ROLE", "ID", "WORKER", "HOST", "PID", "VERSION", "STARTED", "HEARTBEAT", "STATE"}, rows)
}
