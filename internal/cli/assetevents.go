package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/emission"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/taskcli"
)

// assetEventCreateCmd is `weir assets events create`: the admin CLI posts an
// external asset event, as POST /api/v2/assets/events does (docs/requirements.md#e-7).
func (a *app) assetEventCreateCmd() *cobra.Command {
	var (
		name string
		ef   taskcli.EventFlags
	)
	cmd := &cobra.Command{
		Use:   "create --name NAME",
		Short: "Record an asset event from outside Weir, with partition, extra and idempotency key",
		Long: `Records an event of the asset NAME as an external system would with POST /api/v2/assets/events:
DAGs scheduled on the asset are queued, the change is audited as asset_event.create, and the
event's source is api with the user cli:<os user> (remotely, the logged-in user). --partition-date (RFC 3339 with a zone offset)
needs --partition-key; --extra is a JSON object of at most 16 KiB; an --idempotency-key that
already names an event of the asset prints that event with "duplicate": true and creates nothing
(docs/emission.md). Prints the event as JSON.`,
		Example: `  weir assets events create --name orders --partition-key 2026-03-01 --extra '{"rows": 10}' \
    --idempotency-key upstream/orders/2026-03-01`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return fmt.Errorf("--name is required: the asset's name (see weir assets list)")
			}
			var req execclient.EmitRequest
			if err := ef.Fill(cmd, &req); err != nil {
				return err
			}
			r := emission.Request{PartitionKey: req.PartitionKey, PartitionDate: req.PartitionDate, Extra: req.Extra,
				IdempotencyKey: req.IdempotencyKey}
			return a.withBackend(cmd, func(b backend) error {
				x, err := b.AssetGetByName(cmd.Context(), name)
				if err != nil {
					return err
				}
				ev, err := b.AssetEventCreate(cmd.Context(), x.ID, r)
				if err != nil {
					return err
				}
				return printJSON(cmd.OutOrStdout(), struct {
					Event     core.AssetEvent `json:"event"`
					Duplicate bool            `json:"duplicate"`
				}{ev.AssetEvent, ev.Duplicate})
			})
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the asset's name")
	ef.Add(cmd, "names the one event this request creates")
	return cmd
}
