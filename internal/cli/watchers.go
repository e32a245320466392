package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
)

// aliveThreshold is how old a triggerer's heartbeat may be for the
// watchers it runs to show it alive (as the health endpoint's default).
const aliveThreshold = 30 * time.Second

// watchersCmd is `weir assets watchers [ASSET]` with set-cursor and
// reset-cursor (docs/watchers.md#health).
func (a *app) watchersCmd() *cobra.Command {
	var out output
	cmd := &cobra.Command{
		Use:   "watchers [ASSET]",
		Short: "List asset watchers (of one asset) with their health and cursor; set or reset a cursor",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withService(cmd.Context(), func(_ *config.Config, svc *service.Service) error {
				var id int64
				if len(args) == 1 {
					x, err := assetByName(cmd.Context(), svc.Store(), args[0])
					if err != nil {
						return err
					}
					id = x.ID
				}
				ws, err := svc.AssetWatchers(cmd.Context(), id, aliveThreshold)
				if err != nil {
					return err
				}
				rows := make([][]string, len(ws))
				for i, w := range ws {
					rows[i] = []string{w.AssetName, w.Name, w.Trigger.Type, triggererOf(&w), fmtTime(w.LastPollAt),
						strconv.FormatInt(w.Events, 10), fmtTime(w.LastEventAt), errorsOf(&w), orDash(string(w.Cursor))}
				}
				return out.print(cmd.OutOrStdout(), nonNilList(ws), []string{"ASSET", "WATCHER", "TYPE", "TRIGGERER", "LAST_POLL", "EVENTS",
					"LAST_EVENT", "ERRORS", "CURSOR"}, rows)
			})
		},
	}
	out.add(cmd)
	set := &cobra.Command{
		Use:   "set-cursor ASSET WATCHER JSON",
		Short: "Set a watcher's cursor (its next poll starts there); audited",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.setCursor(cmd, args[0], args[1], []byte(args[2]))
		},
	}
	reset := &cobra.Command{
		Use:   "reset-cursor ASSET WATCHER",
		Short: "Delete a watcher's cursor: its next poll starts from the beginning; audited",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.setCursor(cmd, args[0], args[1], nil)
		},
	}
	cmd.AddCommand(set, reset)
	return cmd
}

// setCursor sets (raw) or resets (nil) the cursor of watcher of asset.
func (a *app) setCursor(cmd *cobra.Command, asset, watcher string, raw []byte) error {
	return a.withService(cmd.Context(), func(cfg *config.Config, svc *service.Service) error {
		x, err := assetByName(cmd.Context(), svc.Store(), asset)
		if err != nil {
			return err
		}
		w, err := svc.SetWatcherCursor(cmd.Context(), newStateService(cfg, svc.Store()), a.cliActor(), x.ID, watcher, raw, aliveThreshold)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "watcher %s of asset %s: cursor %s\n", w.Name, w.AssetName, orDash(string(w.Cursor)))
		return nil
	})
}

// triggererOf is the watcher's triggerer job id, marked when dead.
func triggererOf(w *core.Watcher) string {
	switch {
	case w.TriggererID == "":
		return "-"
	case !w.TriggererAlive:
		return w.TriggererID + " (dead)"
	}
	return w.TriggererID
}

// errorsOf is the failures in a row and the last error.
func errorsOf(w *core.Watcher) string {
	if w.LastError == "" {
		return "0"
	}
	return fmt.Sprintf("%d (last at %s: %s)", w.ErrorsInRow, fmtTime(w.LastErrorAt), w.LastError)
}
