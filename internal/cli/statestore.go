package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/user"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/trigger"
)

// newStateService builds the state service (task and asset state) from
// [state_store]; an admin's write of a watcher's cursor is checked against
// the watcher's trigger type in triggers.
func newStateService(cfg *config.Config, st store.Store, triggers *trigger.Registry) *statestore.Service {
	s := cfg.StateStore
	return statestore.New(st, core.SystemClock{}, statestore.Config{DefaultRetentionDays: s.DefaultRetentionDays,
		MaxValueBytes: s.MaxValueBytes, ClearOnSuccess: s.ClearOnSuccess, CleanupBatchSize: s.StateCleanupBatchSize,
		AssetOrphanRetentionDays: s.AssetStateOrphanRetentionDays, AllowUndeclaredAssetReads: s.AllowUndeclaredAssetReads,
		ObjectGrace: s.ObjectGrace.D(), CheckCursor: service.WatcherCursorCheck(st, triggers)})
}

// newStateCleaner is the scheduler's periodic task state cleanup
// ([state_store] cleanup_interval; idle when it is 0).
func newStateCleaner(cfg *config.Config, st store.Store, logger *slog.Logger) runner {
	return &statestore.Cleaner{Service: newStateService(cfg, st, nil), Interval: cfg.StateStore.CleanupInterval.D(), Logger: logger}
}

// stateFlags name the scope of an admin command: a task instance (--dag,
// --run, --task, --map-index) or an asset (--asset NAME). list takes a dag
// alone, or a dag and a run, too.
type stateFlags struct {
	dag, run, task string
	mapIndex       int
	asset          string
}

func (f *stateFlags) add(cmd *cobra.Command, oneScope bool) {
	cmd.Flags().StringVar(&f.dag, "dag", "", "DAG id")
	cmd.Flags().StringVar(&f.run, "run", "", "run id")
	cmd.Flags().StringVar(&f.task, "task", "", "task id")
	cmd.Flags().IntVar(&f.mapIndex, "map-index", core.NoMapIndex, "map index (-1 = unmapped)")
	cmd.Flags().StringVar(&f.asset, "asset", "", "asset name: the asset's state instead of a task instance's")
	cmd.MarkFlagsOneRequired("dag", "asset")
	cmd.MarkFlagsMutuallyExclusive("dag", "asset")
	if oneScope {
		cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
			if f.asset == "" && (f.run == "" || f.task == "") {
				return fmt.Errorf("%s needs --dag, --run and --task (a task instance) or --asset NAME", cmd.CommandPath())
			}
			return nil
		}
	}
}

// scope is the one scope the flags name.
func (f *stateFlags) scope() core.StateScope {
	if f.asset != "" {
		return core.AssetScopeByName(f.asset)
	}
	return core.TaskScope(f.dag, f.run, f.task, f.mapIndex)
}

// stateStoreCmd is the admin CLI of state, of every kind (configuration,
// the CLI and backend classes use Airflow's state_store name). Its edits
// are the state service's audited admin edits, made as cliActor.
func (a *app) stateStoreCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "state-store", Short: "Inspect, edit and clean up task state and asset state (admin)"}

	var lf stateFlags
	var page store.Page
	var out output
	list := &cobra.Command{
		Use:   "list",
		Short: "List task state keys (of a dag, run, task or map index) or an asset's, with their metadata",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withBackend(cmd, func(b backend) error {
				p := &store.StateListParams{Kind: core.StateTask, DagID: lf.dag, RunID: lf.run, TaskID: lf.task, Page: page}
				if cmd.Flags().Changed("map-index") {
					p.MapIndex = &lf.mapIndex
				}
				rows, total, err := b.StateList(cmd.Context(), p, lf.asset)
				kind := p.Kind
				if lf.asset != "" {
					kind = core.StateAsset
				}
				if err != nil {
					return err
				}
				header, cells := stateRows(kind, rows, true)
				if err := out.print(cmd.OutOrStdout(), map[string]any{"entries": nonNilList(rows), "total_entries": total}, header, cells); err != nil {
					return err
				}
				if len(rows) < total && !out.structured() {
					fmt.Fprintf(cmd.OutOrStdout(), "%d of %d entries from offset %d (--limit, --offset)\n", len(rows), total, page.Offset)
				}
				return nil
			})
		},
	}
	lf.add(list, false)
	out.add(list) // json and yaml: {"entries": [...], "total_entries": N}
	list.Flags().IntVar(&page.Limit, "limit", 100, "most entries to print")
	list.Flags().IntVar(&page.Offset, "offset", 0, "entries to skip")
	list.Flags().StringVar(&page.OrderBy, "order-by", "", "key or updated_at; task state also expires_at, dag_id, dag_run_id, task_id, map_index; asset state also asset_name (\"-\" first for descending)")

	var gf stateFlags
	get := &cobra.Command{
		Use:   "get KEY",
		Short: "Print one key's value and metadata as JSON",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(b backend) error {
				e, err := b.StateGet(cmd.Context(), gf.scope(), args[0])
				if err != nil {
					return err
				}
				return printJSON(cmd.OutOrStdout(), e)
			})
		},
	}
	gf.add(get, true)

	var df stateFlags
	del := &cobra.Command{
		Use:   "delete KEY",
		Short: "Delete one key (audited)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(b backend) error {
				return b.StateDelete(cmd.Context(), df.scope(), args[0])
			})
		},
	}
	df.add(del, true)

	var cf stateFlags
	var all bool
	clearCmd := &cobra.Command{
		Use:   "clear",
		Short: "Delete every key of a task instance or an asset (audited; an asset's watcher cursors are kept)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if all && cf.asset != "" {
				return errors.New("--all-map-indices is for task state, not --asset")
			}
			return a.withBackend(cmd, func(b backend) error {
				return b.StateClear(cmd.Context(), cf.scope(), all)
			})
		},
	}
	cf.add(clearCmd, true)
	clearCmd.Flags().BoolVar(&all, "all-map-indices", false, "clear every map index of the task in the run")
	cmd.AddCommand(list, get, del, clearCmd, a.cleanupTaskStoreCmd())
	return cmd
}

// cleanupTaskStoreCmd is `weir state-store cleanup-task-store`
// (docs/state-store-cleanup.md).
func (a *app) cleanupTaskStoreCmd() *cobra.Command {
	var dry bool
	cmd := &cobra.Command{
		Use: "cleanup-task-store",
		// Airflow 3.3 names the command `airflow state-store clean`.
		Aliases: []string{"clean"},
		Short:   "Delete expired task state rows and the state of long-inactive assets",
		Long: `Deletes task state rows whose expires_at is in the past, in batches of
[state_store] state_cleanup_batch_size with a commit per batch (0 = one statement).
Rows written with retention "never", or without expiry, are never deleted. Then sweeps
the state of assets inactive (defined by no active DAG) for longer than [state_store]
asset_state_orphan_retention_days (0 = never), in the same batches. With --dry-run it
lists what would go (task state by dag, run, task, map index and key; asset state by
asset and key) and deletes nothing. Both print a summary count for each.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withState(cmd.Context(), func(svc *statestore.Service) error {
				rep, err := svc.Cleanup(cmd.Context(), dry)
				if err != nil {
					return err
				}
				return printCleanup(cmd, rep, svc.Config())
			})
		},
	}
	cmd.Flags().BoolVar(&dry, "dry-run", false, "list what would be deleted; delete nothing")
	return cmd
}

// printCleanup reports a cleanup: what a dry run would delete, or how many
// rows went, of task state and then of the asset orphan sweep.
func printCleanup(cmd *cobra.Command, rep *statestore.CleanupReport, cfg statestore.Config) error {
	out := cmd.OutOrStdout()
	if rep.DryRun {
		if err := stateTable(cmd, core.StateTask, rep.Expired, false); err != nil {
			return err
		}
		fmt.Fprintf(out, "dry run: %d expired task state rows would be deleted (expires_at before %s)\n",
			len(rep.Expired), rep.Before.UTC().Format(time.RFC3339))
	} else {
		fmt.Fprintf(out, "deleted %d expired task state rows in %d batches (state_cleanup_batch_size %d)\n",
			rep.Deleted, rep.Batches, cfg.CleanupBatchSize)
	}
	if rep.OrphanBefore.IsZero() {
		fmt.Fprintln(out, "asset state orphan sweep is off (asset_state_orphan_retention_days = 0)")
		return nil
	}
	since := rep.OrphanBefore.UTC().Format(time.RFC3339)
	if rep.DryRun {
		if err := stateTable(cmd, core.StateAsset, rep.Orphans, false); err != nil {
			return err
		}
		fmt.Fprintf(out, "dry run: %d asset state rows of assets inactive since before %s would be deleted (asset_state_orphan_retention_days %d)\n",
			len(rep.Orphans), since, cfg.AssetOrphanRetentionDays)
		return nil
	}
	fmt.Fprintf(out, "deleted %d asset state rows of assets inactive since before %s (asset_state_orphan_retention_days %d)\n",
		rep.OrphansDeleted, since, cfg.AssetOrphanRetentionDays)
	return nil
}

// withState opens the store and runs fn with the configured state service.
func (a *app) withState(ctx context.Context, fn func(*statestore.Service) error) error {
	return a.withStore(ctx, func(cfg *config.Config, st *sqlstore.Store) error {
		return fn(newStateService(cfg, st, a.opts.triggerTypes))
	})
}

// stateTable prints entries of kind in the store's order: the scope (task
// state by dag, run, task and map index; asset state by asset), the key,
// when it expires (task state) or since when its asset is inactive (asset
// state), and with withValues when and by whom it was written and its value.
func stateTable(cmd *cobra.Command, kind core.StateKind, rows []core.StateEntry, withValues bool) error {
	header, cells := stateRows(kind, rows, withValues)
	return table(cmd.OutOrStdout(), header, cells)
}

// stateRows is stateTable's header and rows.
func stateRows(kind core.StateKind, rows []core.StateEntry, withValues bool) ([]string, [][]string) {
	header := []string{"DAG_ID", "RUN_ID", "TASK_ID", "MAP_INDEX", "KEY", "EXPIRES_AT"}
	if kind == core.StateAsset {
		header = []string{"ASSET", "KEY", "INACTIVE_SINCE"}
	}
	if withValues {
		header = append(header, "UPDATED_AT", "BY", "VALUE")
	}
	out := make([][]string, len(rows))
	for i, r := range rows {
		sc := r.Scope
		if kind == core.StateAsset {
			out[i] = []string{sc.AssetName, r.Key, fmtTime(r.AssetInactiveSince)}
		} else {
			exp := fmtTime(r.ExpiresAt)
			if r.NeverExpire {
				exp = "never"
			}
			out[i] = []string{sc.DagID, sc.RunID, sc.TaskID, strconv.Itoa(sc.MapIndex), r.Key, exp}
		}
		if withValues {
			v := string(r.Value)
			if len(v) > 60 {
				v = v[:57] + "..."
			}
			out[i] = append(out[i], fmtTime(&r.UpdatedAt), describeWriter(r.UpdatedBy), v)
		}
	}
	return header, out
}

// describeWriter formats who last wrote an entry: task dag/run/task[i]
// try N, user NAME, or the kind.
func describeWriter(w core.StateWriter) string {
	switch w.Kind {
	case core.StateWriterTask:
		t := w.DagID + "/" + w.RunID + "/" + w.TaskID
		if w.MapIndex >= 0 {
			t += "[" + strconv.Itoa(w.MapIndex) + "]"
		}
		return "task " + t + " try " + strconv.Itoa(w.TryNumber)
	case core.StateWriterUser:
		if w.User == "" {
			return "user"
		}
		return "user " + w.User
	}
	return w.Kind
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
