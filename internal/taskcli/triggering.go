package taskcli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/execclient"
)

// TriggeringEventsCmd is the in-task `weir assets triggering-events`: every
// asset event that created the running task's run, one JSON object a line,
// oldest first, however many (WEIR_TRIGGERING_ASSET_EVENTS holds the first
// 1,000 at most, and is left out over 128 KiB).
func TriggeringEventsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "triggering-events",
		Short: "From inside a running task, print every asset event that created its run, one JSON object a line",
		Long: `Prints the asset events that created the running task's run (an asset-triggered run: a
watcher's files, a producer's partitions), oldest first, one JSON object per line (JSON Lines):
id, asset_id, name, uri, extra, partition_key, partition_date, source_*, timestamp. It reads them
a page at a time through the Execution API, so a burst of any size comes whole, where
WEIR_TRIGGERING_ASSET_EVENTS holds the first 1,000 and is left out over 128 KiB. A run not created
by asset events prints nothing. Reads WEIR_API_URL, WEIR_TASK_TOKEN (or WEIR_TASK_TOKEN_FILE) and
WEIR_TI_ID, which the worker sets for every task.

Exit codes: 0 printed; 3 the API refused the request (the try is not running) or could not be
reached, or no task runs this command.`,
		Example: `  weir assets triggering-events | jq -r '.extra.path' | while IFS= read -r file; do load "$file"; done`,
		Args:    args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := execclient.ClientFromEnv()
			if err != nil {
				return &ExitError{Code: exitFailed, Err: fmt.Errorf("read the run's triggering asset events: %w", apiProblem(err))}
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			for after := int64(0); ; {
				page, err := c.TriggeringEvents(cmd.Context(), after, 0)
				if err != nil {
					return taskStateError("read the run's triggering asset events", err)
				}
				for _, e := range page.Events {
					if err := enc.Encode(e); err != nil {
						return err
					}
					after = e.ID
				}
				if len(page.Events) == 0 {
					return nil
				}
			}
		},
	}
}
