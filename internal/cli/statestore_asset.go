package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

// requireTask checks, for commands on one task instance, that --run and
// --task name it unless --asset names an asset instead.
func (f *taskStateFlags) requireTask(cmd *cobra.Command, _ []string) error {
	if f.asset == "" && (f.run == "" || f.task == "") {
		return fmt.Errorf("%s needs --dag, --run and --task (a task instance) or --asset NAME", cmd.CommandPath())
	}
	return nil
}

// assetStateList prints an asset's state with who last wrote each key.
func (a *app) assetStateList(cmd *cobra.Command, asset string, asJSON bool) error {
	return a.withState(cmd.Context(), func(svc *statestore.Service, _ *sqlstore.Store) error {
		m, err := svc.ResolveAsset(cmd.Context(), statestore.AssetScope{Name: asset})
		if err != nil {
			return err
		}
		rows, err := svc.AssetList(cmd.Context(), m.ID)
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(cmd.OutOrStdout(), rows)
		}
		return assetStateTable(cmd, rows, true)
	})
}

// assetStateGet prints one key of an asset's state as JSON.
func (a *app) assetStateGet(cmd *cobra.Command, asset, key string) error {
	return a.withState(cmd.Context(), func(svc *statestore.Service, _ *sqlstore.Store) error {
		e, err := svc.Get(cmd.Context(), statestore.AssetScope{Name: asset}, key)
		if err != nil {
			return fmt.Errorf("asset state key %q of asset %q: %w", key, asset, err)
		}
		return printJSON(cmd.OutOrStdout(), e)
	})
}

// assetStateDelete deletes one key of an asset's state, or with key ""
// clears it; audited.
func (a *app) assetStateDelete(cmd *cobra.Command, asset, key string) error {
	return a.withState(cmd.Context(), func(svc *statestore.Service, st *sqlstore.Store) error {
		scope := statestore.AssetScope{Name: asset}
		if key == "" {
			if err := svc.Clear(cmd.Context(), scope, false); err != nil {
				return err
			}
			return a.auditCLI(cmd.Context(), st, "asset_state.clear", asset, "")
		}
		if err := svc.Delete(cmd.Context(), scope, key); err != nil {
			return err
		}
		return a.auditCLI(cmd.Context(), st, "asset_state.delete", asset, "key="+key)
	})
}

// printOrphanSweep reports cleanup's asset orphan sweep (SPEC AS-5): what a
// dry run would delete, or how many rows went.
func printOrphanSweep(cmd *cobra.Command, rep *statestore.CleanupReport, cfg statestore.Config) error {
	out := cmd.OutOrStdout()
	if rep.OrphanBefore.IsZero() {
		fmt.Fprintln(out, "asset state orphan sweep is off (asset_state_orphan_retention_days = 0)")
		return nil
	}
	since := rep.OrphanBefore.UTC().Format(time.RFC3339)
	if rep.DryRun {
		if err := assetStateTable(cmd, rep.Orphans, false); err != nil {
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

// assetStateTable prints asset-state entries by asset and key (with values
// and writers only when withValues).
func assetStateTable(cmd *cobra.Command, rows []store.AssetStateEntry, withValues bool) error {
	header := []string{"ASSET", "KEY", "INACTIVE_SINCE"}
	if withValues {
		header = append(header, "UPDATED_AT", "BY", "VALUE")
	}
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = []string{r.AssetName, r.Key, fmtTime(r.AssetInactiveSince)}
		if withValues {
			v := string(r.Value)
			if len(v) > 60 {
				v = v[:57] + "..."
			}
			out[i] = append(out[i], fmtTime(&r.UpdatedAt), describeWriter(r.UpdatedBy), v)
		}
	}
	return table(cmd.OutOrStdout(), header, out)
}

// describeWriter formats who last wrote an entry: task dag/run/task[i]#try
// or user NAME.
func describeWriter(w store.StateWriter) string {
	switch w.Kind {
	case store.StateWriterTask:
		t := w.DagID + "/" + w.RunID + "/" + w.TaskID
		if w.MapIndex >= 0 {
			t += "[" + strconv.Itoa(w.MapIndex) + "]"
		}
		return "task " + t + " try " + strconv.Itoa(w.TryNumber)
	case store.StateWriterUser:
		return "user " + w.User
	}
	return w.Kind
}
