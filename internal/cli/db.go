package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/job"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

// newerNote says, after a schema version, when a newer weir migrated the
// database past this binary's migrations.
func newerNote(s *sqlstore.MigrationStatus) string {
	if !s.Newer() {
		return ""
	}
	return fmt.Sprintf(", newer than this weir's %d: a newer weir migrated it; this one runs on it while the "+
		"deployment is upgraded (docs/deployment.md#upgrades), then upgrade it too", s.Latest)
}

func (a *app) dbCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "db", Short: "Manage the metadata database"}
	migrate := &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending schema migrations",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, st, _, err := a.serverSetup(cmd.Context(), true)
			if err != nil {
				return err
			}
			defer st.Close()
			status, err := st.MigrationStatus(cmd.Context())
			if err != nil {
				return err
			}
			if from, to, ok := st.Migrated(); ok {
				fmt.Fprintf(cmd.OutOrStdout(), "%s database migrated from schema version %d to %d\n", st.Dialect(), from, to)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s database at schema version %d (nothing to migrate)%s\n", st.Dialect(), status.Current, newerNote(status))
			return nil
		},
	}
	check := &cobra.Command{
		Use:   "check",
		Short: "Check that the database is reachable and fully migrated",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(_ *config.Config, st *sqlstore.Store) error {
				status, err := st.MigrationStatus(cmd.Context())
				if err != nil {
					return err
				}
				if status.Newer() {
					fmt.Fprintf(cmd.OutOrStdout(), "%s database is reachable, at schema version %d%s\n", st.Dialect(), status.Current, newerNote(status))
					return nil
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s database is reachable and up to date\n", st.Dialect())
				return nil
			})
		},
	}
	var yes, force bool
	reset := &cobra.Command{
		Use:   "reset",
		Short: "Drop every table and migrate from scratch (all data is lost)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !yes {
				return fmt.Errorf("db reset deletes all data: pass --yes to confirm")
			}
			cfg, err := a.config()
			if err != nil {
				return err
			}
			st, err := openStore(cmd.Context(), cfg, true, false, 0, newLogger(a.opts.Stderr, cfg.Logging.Level))
			if err != nil {
				return err
			}
			defer st.Close()
			if live := liveProcesses(cmd.Context(), st); len(live) > 0 && !force {
				return fmt.Errorf("%d process(es) of this database beat within their heartbeat threshold (%s): stop them "+
					"first (a process stopped a moment ago is still listed: retry in a few heartbeat intervals), or pass --force "+
					"(processes still running would go on against an empty database, and their running tasks' logs and ends would be lost)",
					len(live), strings.Join(live, ", "))
			}
			if err := st.Reset(cmd.Context()); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "database reset")
			return nil
		},
	}
	reset.Flags().BoolVar(&yes, "yes", false, "confirm that all data may be deleted")
	reset.Flags().BoolVar(&force, "force", false, "reset even while processes of the database are running (their heartbeats are recent)")
	cmd.AddCommand(migrate, check, reset)
	return cmd
}

// liveProcesses names the processes whose heartbeats say they run against
// st now ("scheduler on host (pid 12)"); none when their table cannot be
// read (a database never migrated).
func liveProcesses(ctx context.Context, st *sqlstore.Store) []string {
	jobs, err := st.JobList(ctx)
	if err != nil {
		return nil
	}
	var live []string
	for _, in := range job.Judge(jobs, time.Now(), 0).Instances {
		if in.State == job.StateHealthy {
			live = append(live, fmt.Sprintf("%s on %s (pid %d)", in.Role, in.Hostname, in.PID))
		}
	}
	return live
}
