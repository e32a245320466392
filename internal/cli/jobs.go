package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/job"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/taskcli"
)

// jobsCmd checks which Weir processes are alive, as `airflow jobs check`.
func (a *app) jobsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "jobs", Short: "Check which Weir processes (scheduler, dag-processor, triggerer, api-server, worker) are alive"}
	var role string
	var threshold time.Duration
	check := &cobra.Command{
		Use:   "check",
		Short: "List the processes whose heartbeat is recent; exit 1 when none (of --role) is",
		Example: "  weir jobs check --role triggerer   # a liveness probe for a triggerer\n" +
			"  weir jobs check --threshold 1m",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if role != "" && !slices.Contains(job.Roles, role) {
				// A typo in a liveness probe must not read as a dead process.
				return fmt.Errorf("--role %q is not a role: use one of %s", role, strings.Join(job.Roles, ", "))
			}
			return a.withStore(cmd.Context(), func(_ *config.Config, st *sqlstore.Store) error {
				jobs, err := st.JobList(cmd.Context())
				if err != nil {
					return err
				}
				now := time.Now()
				var rows [][]string
				for _, j := range jobs {
					if (role == "" || j.Role == role) && now.Sub(j.Heartbeat) <= threshold {
						rows = append(rows, []string{j.Role, j.ID, j.Hostname, strconv.Itoa(j.PID), fmtTime(&j.Heartbeat)})
					}
				}
				if len(rows) == 0 {
					what := "Weir process"
					if role != "" {
						what = role
					}
					return &taskcli.ExitError{Code: 1, Err: fmt.Errorf("no %s has a heartbeat in the last %s", what, threshold)}
				}
				return table(cmd.OutOrStdout(), []string{"ROLE", "ID", "HOST", "PID", "HEARTBEAT"}, rows)
			})
		},
	}
	check.Flags().StringVar(&role, "role", "", "only processes of this role: scheduler, dag-processor, triggerer, api-server or worker")
	check.Flags().DurationVar(&threshold, "threshold", 30*time.Second, "a heartbeat older than this is dead")
	cmd.AddCommand(check)
	return cmd
}
