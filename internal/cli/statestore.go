package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os/user"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

// newStateService builds the state service (task and asset state) from [state_store].
func newStateService(cfg *config.Config, st store.Store) *statestore.Service {
	s := cfg.StateStore
	return statestore.New(st, core.SystemClock{}, statestore.Config{DefaultRetentionDays: s.DefaultRetentionDays,
		MaxValueBytes: s.MaxValueBytes, ClearOnSuccess: s.ClearOnSuccess, CleanupBatchSize: s.StateCleanupBatchSize,
		AssetOrphanRetentionDays: s.AssetStateOrphanRetentionDays, AllowUndeclaredAssetReads: s.AllowUndeclaredAssetReads})
}

// newStateCleaner is the scheduler's periodic task state cleanup
// ([state_store] cleanup_interval; idle when it is 0).
func newStateCleaner(cfg *config.Config, st store.Store, logger *slog.Logger) runner {
	return &statestore.Cleaner{Service: newStateService(cfg, st), Interval: cfg.StateStore.CleanupInterval.D(), Logger: logger}
}

// taskStateFlags name a task instance on the admin commands.
type taskStateFlags struct {
	dag, run, task string
	mapIndex       int
	asset          string // --asset: an asset's state instead (statestore_asset.go)
}

func (f *taskStateFlags) add(cmd *cobra.Command, required bool) {
	cmd.Flags().StringVar(&f.dag, "dag", "", "DAG id")
	cmd.Flags().StringVar(&f.run, "run", "", "run id")
	cmd.Flags().StringVar(&f.task, "task", "", "task id")
	cmd.Flags().IntVar(&f.mapIndex, "map-index", core.NoMapIndex, "map index (-1 = unmapped)")
	cmd.Flags().StringVar(&f.asset, "asset", "", "asset name: the asset's state instead of a task instance's")
	cmd.MarkFlagsOneRequired("dag", "asset")
	cmd.MarkFlagsMutuallyExclusive("dag", "asset")
	if required {
		cmd.PreRunE = f.requireTask
	}
}

func (f *taskStateFlags) scope() statestore.TaskScope {
	return statestore.TaskScope{DagID: f.dag, RunID: f.run, TaskID: f.task, MapIndex: f.mapIndex}
}

func (f *taskStateFlags) target() string {
	t := f.dag + "/" + f.run + "/" + f.task
	if f.mapIndex >= 0 {
		t += "/" + strconv.Itoa(f.mapIndex)
	}
	return t
}

// stateStoreCmd is the admin CLI of task state (configuration, the CLI and
// backend classes use the state_store name).
func (a *app) stateStoreCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "state-store", Short: "Inspect, edit and clean up task state and asset state (admin)"}
	var lf taskStateFlags
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List task state keys with their metadata",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if lf.asset != "" {
				return a.assetStateList(cmd, lf.asset, asJSON)
			}
			p := &store.TaskStateListParams{DagID: lf.dag, RunID: lf.run, TaskID: lf.task}
			if cmd.Flags().Changed("map-index") {
				p.MapIndex = &lf.mapIndex
			}
			return a.withState(cmd.Context(), func(svc *statestore.Service, _ *sqlstore.Store) error {
				rows, err := svc.List(cmd.Context(), p)
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), rows)
				}
				return stateTable(cmd, rows, true)
			})
		},
	}
	lf.add(list, false)
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	var gf taskStateFlags
	get := &cobra.Command{
		Use:   "get KEY",
		Short: "Print one key's value and metadata as JSON",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if gf.asset != "" {
				return a.assetStateGet(cmd, gf.asset, args[0])
			}
			return a.withState(cmd.Context(), func(svc *statestore.Service, _ *sqlstore.Store) error {
				e, err := svc.Get(cmd.Context(), gf.scope(), args[0])
				if err != nil {
					return fmt.Errorf("task state key %q of %s: %w", args[0], gf.target(), err)
				}
				return printJSON(cmd.OutOrStdout(), e)
			})
		},
	}
	gf.add(get, true)

	var df taskStateFlags
	del := &cobra.Command{
		Use:   "delete KEY",
		Short: "Delete one key (audited)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if df.asset != "" {
				return a.assetStateDelete(cmd, df.asset, args[0])
			}
			return a.withState(cmd.Context(), func(svc *statestore.Service, st *sqlstore.Store) error {
				if err := svc.Delete(cmd.Context(), df.scope(), args[0]); err != nil {
					return err
				}
				return a.auditCLI(cmd.Context(), st, "task_state.delete", df.target(), "key="+args[0])
			})
		},
	}
	df.add(del, true)

	var cf taskStateFlags
	var all bool
	clearCmd := &cobra.Command{
		Use:   "clear",
		Short: "Delete every key of a task instance (audited)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cf.asset != "" {
				return a.assetStateDelete(cmd, cf.asset, "")
			}
			return a.withState(cmd.Context(), func(svc *statestore.Service, st *sqlstore.Store) error {
				if err := svc.Clear(cmd.Context(), cf.scope(), all); err != nil {
					return err
				}
				return a.auditCLI(cmd.Context(), st, "task_state.clear", cf.target(), fmt.Sprintf("all_map_indices=%t", all))
			})
		},
	}
	cf.add(clearCmd, true)
	clearCmd.Flags().BoolVar(&all, "all-map-indices", false, "clear every map index of the task in the run")
	cmd.AddCommand(list, get, del, clearCmd, a.cleanupTaskStoreCmd())
	return cmd
}

// cleanupTaskStoreCmd is `weir state-store cleanup-task-store` (SPEC GC-1).
func (a *app) cleanupTaskStoreCmd() *cobra.Command {
	var dry bool
	cmd := &cobra.Command{
		Use:   "cleanup-task-store",
		Short: "Delete expired task state rows and the state of long-inactive assets",
		Long: `Deletes task state rows whose expires_at is in the past, in batches of
[state_store] state_cleanup_batch_size with a commit per batch (0 = one statement).
Rows written with retention "never", or without expiry, are never deleted. Then sweeps
the state of assets inactive (defined by no active DAG) for longer than [state_store]
asset_state_orphan_retention_days (0 = never), in the same batches. With --dry-run it
lists what would go (task state by dag, run, task, map index and key; asset state by
asset and key) and deletes nothing. Both print a summary count for each.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withState(cmd.Context(), func(svc *statestore.Service, _ *sqlstore.Store) error {
				rep, err := svc.Cleanup(cmd.Context(), dry)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if dry {
					if err := stateTable(cmd, rep.Expired, false); err != nil {
						return err
					}
					fmt.Fprintf(out, "dry run: %d expired task state rows would be deleted (expires_at before %s)\n",
						len(rep.Expired), rep.Before.UTC().Format(time.RFC3339))
					return printOrphanSweep(cmd, rep, svc.Config())
				}
				fmt.Fprintf(out, "deleted %d expired task state rows in %d batches (state_cleanup_batch_size %d)\n",
					rep.Deleted, rep.Batches, svc.Config().CleanupBatchSize)
				return printOrphanSweep(cmd, rep, svc.Config())
			})
		},
	}
	cmd.Flags().BoolVar(&dry, "dry-run", false, "list what would be deleted; delete nothing")
	return cmd
}

// withState opens the store and runs fn with the configured state service.
func (a *app) withState(ctx context.Context, fn func(*statestore.Service, *sqlstore.Store) error) error {
	return a.withStore(ctx, func(cfg *config.Config, st *sqlstore.Store) error {
		return fn(newStateService(cfg, st), st)
	})
}

// auditCLI records an admin change made from the command line.
func (a *app) auditCLI(ctx context.Context, st store.Store, action, target, detail string) error {
	user := "cli"
	if u := a.getenv("USER"); u != "" {
		user = "cli:" + u
	}
	return st.AuditLogAdd(ctx, &core.AuditEntry{When: time.Now(), User: user, Action: action, Target: target, Detail: detail})
}

// stateTable prints entries sorted by dag, run, task, map index and key
// (values only when withValues).
func stateTable(cmd *cobra.Command, rows []store.TaskStateEntry, withValues bool) error {
	header := []string{"DAG_ID", "RUN_ID", "TASK_ID", "MAP_INDEX", "KEY", "EXPIRES_AT"}
	if withValues {
		header = append(header, "UPDATED_AT", "BY_RUN", "BY_TRY", "VALUE")
	}
	out := make([][]string, len(rows))
	for i, r := range rows {
		exp := fmtTime(r.ExpiresAt)
		if r.NeverExpire {
			exp = "never"
		}
		out[i] = []string{r.DagID, r.RunID, r.TaskID, strconv.Itoa(r.MapIndex), r.Key, exp}
		if withValues {
			v := string(r.Value)
			if len(v) > 60 {
				v = v[:57] + "..."
			}
			out[i] = append(out[i], fmtTime(&r.UpdatedAt), r.UpdatedByRun, strconv.Itoa(r.UpdatedByTry), v)
		}
	}
	return table(cmd.OutOrStdout(), header, out)
}

// cliActor is who the admin CLI acts as: "cli:<os user>", with the admin
// role (it holds the database credentials).
func (a *app) cliActor() core.Actor {
	name := a.getenv("USER")
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	if name == "" {
		return core.Actor{Name: "cli", Role: core.RoleAdmin}
	}
	return core.Actor{Name: "cli:" + name, Role: core.RoleAdmin}
}
