package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
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
			asset := ""
			if len(args) == 1 {
				asset = args[0]
			}
			return a.withBackend(cmd, func(b backend) error {
				ws, err := b.WatcherList(cmd.Context(), asset)
				if err != nil {
					return err
				}
				rows := make([][]string, len(ws))
				for i, w := range ws {
					rows[i] = []string{w.AssetName, w.Name, w.Trigger.Type, triggererOf(&w), fmtTime(w.LastPollAt),
						strconv.FormatInt(w.Events, 10), fmtTime(w.LastEventAt), errorsOf(&w), cursorOf(&w)}
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
			if !json.Valid([]byte(args[2])) {
				return fmt.Errorf("cursor %q is not JSON: give a JSON value such as '{\"offset\": 10}' or '\"2026-01-01\"'", args[2])
			}
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
	return a.withBackend(cmd, func(b backend) error {
		w, err := b.WatcherSetCursor(cmd.Context(), asset, watcher, raw)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "watcher %s of asset %s: cursor %s\n", w.Name, w.AssetName, cursorOf(w))
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

// cursorOf is the watcher's cursor, "-" without one (absent, or JSON null
// as the API answers it).
func cursorOf(w *core.Watcher) string {
	if string(w.Cursor) == "null" {
		return "-"
	}
	return orDash(string(w.Cursor))
}
