package taskcli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// AddToAliasCmd is the in-task `weir assets add-to-alias`: like `weir
// asset-state`, it runs inside a task and reaches the Execution API with the
// try's token (docs/assets.md#aliases).
func AddToAliasCmd() *cobra.Command {
	var name, uri, extra string
	cmd := &cobra.Command{
		Use:   "add-to-alias ALIAS (--name NAME | --uri URI)",
		Short: "From inside a running task, add an asset to an alias the task declares as an outlet",
		Long: `Adds a concrete asset to ALIAS, an alias the running task declares as an outlet (Airflow's
outlet_events[AssetAlias(ALIAS)].add(asset, extra)). The addition is kept while the try runs:
when the try succeeds, the asset gets an event (source kind task) with --extra, and the
alias resolves to the asset from then on (DAGs scheduled on the alias run; tasks with the
alias as an inlet reach the asset's state). A failed try records nothing. Adding the same
asset again replaces its extra. Reads WEIR_API_URL, WEIR_TASK_TOKEN (or WEIR_TASK_TOKEN_FILE)
and WEIR_TI_ID, which the worker sets for every task.

Exit codes: 0 success; 2 bad input (neither or both of --name and --uri, --extra not a JSON
object); 3 the API refused the request (the alias is not an outlet of the task, the asset is
unknown or inactive, the try is no longer running) or could not be reached.`,
		Example: `  weir assets add-to-alias exports --name "export_$(date +%F)" --extra '{"rows": 10}'`,
		Args:    args(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if (name == "") == (uri == "") {
				return &ExitError{Code: exitInvalid, Err: fmt.Errorf("pass exactly one of --name or --uri")}
			}
			var raw json.RawMessage
			if extra != "" {
				var obj map[string]any
				if err := json.Unmarshal([]byte(extra), &obj); err != nil || obj == nil {
					return &ExitError{Code: exitInvalid, Err: fmt.Errorf("--extra must be a JSON object such as '{\"rows\": 10}', got %.40s", extra)}
				}
				raw = json.RawMessage(extra)
			}
			c, err := execclient.ClientFromEnv()
			if err != nil {
				return &ExitError{Code: exitFailed, Err: apiProblem(err)}
			}
			if err := c.AddToAlias(cmd.Context(), argv[0], core.AssetRef{Name: name, URI: uri}, raw); err != nil {
				return taskStateError("add to alias", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the asset's name")
	cmd.Flags().StringVar(&uri, "uri", "", "the asset's uri")
	cmd.Flags().StringVar(&extra, "extra", "", "the event's extra, a JSON object")
	return cmd
}
