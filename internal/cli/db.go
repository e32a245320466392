package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/config"
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
			fmt.Fprintf(cmd.OutOrStdout(), "%s database at schema version %d%s\n", st.Dialect(), status.Current, newerNote(status))
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
	var yes bool
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
			if err := st.Reset(cmd.Context()); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "database reset")
			return nil
		},
	}
	reset.Flags().BoolVar(&yes, "yes", false, "confirm that all data may be deleted")
	cmd.AddCommand(migrate, check, reset)
	return cmd
}
