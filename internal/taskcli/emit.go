package taskcli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// EmitCmd is the in-task `weir assets emit`: a running task emits an asset
// event now, through the Execution API with the try's token, and prints
// the receipt (docs/emission.md).
func EmitCmd() *cobra.Command {
	var (
		name, uri, alias string
		ef               EventFlags
	)
	cmd := &cobra.Command{
		Use:   "emit (--name NAME | --uri URI)",
		Short: "From inside a running task, emit an asset event now and print its receipt",
		Long: `Emits an event of an asset the running task declares as an outlet (or, with --alias, of any
active asset through an alias the task declares as an outlet) and prints the receipt as JSON:
event_id, asset_id, name, uri, partition_key, partition_date, idempotency_key, timestamp (the
server's) and duplicate. The event is committed when the command returns; it is queued for
the asset's consumers at once and stays whatever the task does later. The task's state does
not change, and its outlets still get their normal event if it succeeds.

--partition-date (RFC 3339 with a zone offset) needs --partition-key. --extra is a JSON object
(at most 16 KiB; values of keys such as password or token are stored as "***").
--idempotency-key names the one event this emission creates: emitting again with the key —
from a retry of the task too — prints the first event's receipt with "duplicate": true and
creates nothing. Without one the command makes one up, so its own retries after a lost answer
are safe. Reads WEIR_API_URL, WEIR_TASK_TOKEN (or WEIR_TASK_TOKEN_FILE) and WEIR_TI_ID, which
the worker sets for every task: there is no emitting outside a running task (such as while a
DAG file is loaded).

Exit codes: 0 emitted (or repeated); 2 bad input (neither or both of --name and --uri, a date
without a key or without a zone, --extra not a JSON object or too large); 3 the API refused
the request (the asset is not an outlet of the task, the key names another asset's event,
the try is not running) or could not be reached, or no task runs this command.`,
		Example: `  weir assets emit --name batches --partition-key "batch-$N" --extra "{\"rows\": $ROWS}" \
    --idempotency-key "ingest/batch-$N"`,
		Args: args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (name == "") == (uri == "") {
				return &ExitError{Code: exitInvalid, Err: fmt.Errorf("pass exactly one of --name or --uri")}
			}
			req := execclient.EmitRequest{Asset: core.AssetRef{Name: name, URI: uri}, Alias: alias}
			if err := ef.Fill(cmd, &req); err != nil {
				return &ExitError{Code: exitInvalid, Err: err}
			}
			c, err := execclient.ClientFromEnv()
			if err != nil {
				return &ExitError{Code: exitFailed, Err: fmt.Errorf("emit an asset event: %w", apiProblem(err))}
			}
			rec, err := c.Emit(cmd.Context(), req)
			if err != nil {
				return taskStateError("emit", err)
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			return enc.Encode(rec)
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "the asset's name")
	f.StringVar(&uri, "uri", "", "the asset's uri")
	f.StringVar(&alias, "alias", "", "an alias outlet of the task to emit through (the asset may then be any active asset)")
	ef.Add(cmd, "names the one event this emission creates (default: a fresh key per call)")
	return cmd
}

// EventFlags are the flags of an event's fields that `weir assets emit` and
// the admin CLI's `weir assets events create` share.
type EventFlags struct {
	partKey, partDate, extra, key string
}

// Add defines --partition-key, --partition-date, --extra and
// --idempotency-key (described by keyHelp) on cmd.
func (f *EventFlags) Add(cmd *cobra.Command, keyHelp string) {
	fs := cmd.Flags()
	fs.StringVar(&f.partKey, "partition-key", "", "the event's partition key")
	fs.StringVar(&f.partDate, "partition-date", "", "the partition's date, RFC 3339 with a zone offset (needs --partition-key)")
	fs.StringVar(&f.extra, "extra", "", "the event's extra, a JSON object")
	fs.StringVar(&f.key, "idempotency-key", "", keyHelp)
}

// Fill sets req's partition, extra and idempotency key from the flags
// (the server checks them); an --extra that is not JSON is an error.
func (f *EventFlags) Fill(cmd *cobra.Command, req *execclient.EmitRequest) error {
	req.PartitionDate = f.partDate
	if cmd.Flags().Changed("partition-key") {
		req.PartitionKey = &f.partKey
	}
	if cmd.Flags().Changed("idempotency-key") {
		req.IdempotencyKey = &f.key
	}
	if f.extra != "" {
		if err := json.Unmarshal([]byte(f.extra), new(json.RawMessage)); err != nil {
			return fmt.Errorf("--extra %.40s is not JSON (%w): give a JSON object such as '{\"rows\": 10}'", f.extra, err)
		}
		req.Extra = json.RawMessage(f.extra)
	}
	return nil
}
