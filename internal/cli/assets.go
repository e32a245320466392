package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/taskcli"
)

// assetsCmd is `weir assets list|show|events|aliases|add-to-alias|emit`
// (docs/assets.md, docs/emission.md).
func (a *app) assetsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "assets", Short: "List assets, their events, aliases and watchers; create events; emit or add to an alias from a task"}
	var (
		asJSON, all                 bool
		out                         output
		assetName, partition        string
		listPF, eventsPF, aliasesPF pageFlags
	)
	list := &cobra.Command{
		Use:   "list",
		Short: "List assets by name (by default only those some active DAG defines)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pg, err := listPF.page()
			if err != nil {
				return err
			}
			return a.withBackend(cmd, func(b backend) error {
				p := &store.AssetListParams{Page: pg}
				if active := true; !all {
					p.Active = &active
				}
				assets, total, err := b.AssetList(cmd.Context(), p)
				assets, err = shownPage(cmd, &listPF, assets, total, err)
				if err != nil {
					return err
				}
				rows := make([][]string, len(assets))
				for i, x := range assets {
					rows[i] = []string{strconv.FormatInt(x.ID, 10), x.Name, x.URI, x.Group, strconv.FormatBool(x.Active),
						fmtTime(&x.UpdatedAt)}
				}
				return out.print(cmd.OutOrStdout(), nonNilList(assets), []string{"ID", "NAME", "URI", "GROUP", "ACTIVE", "UPDATED"}, rows)
			})
		},
	}
	list.Flags().BoolVar(&all, "all", false, "include inactive assets")
	out.add(list)
	listPF.add(list, "assets", 100)

	show := &cobra.Command{
		Use:   "show NAME",
		Short: "Show an asset: definition, DAGs scheduled on it, tasks producing and consuming it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(b backend) error {
				x, err := b.AssetGetByName(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), x)
				}
				out := cmd.OutOrStdout()
				fmt.Fprintf(out, "name: %s\nid: %d\nuri: %s\ngroup: %s\nactive: %t\n", x.Name, x.ID, x.URI, x.Group, x.Active)
				if x.InactiveSince != nil {
					fmt.Fprintf(out, "inactive since: %s\n", fmtTime(x.InactiveSince))
				}
				if len(x.Extra) > 0 {
					extra, err := json.Marshal(x.Extra)
					if err != nil {
						return fmt.Errorf("asset %q: encode extra: %w", x.Name, err)
					}
					fmt.Fprintf(out, "extra: %s\n", extra)
				}
				fmt.Fprintf(out, "scheduled dags: %s\nproducing tasks: %s\nconsuming tasks: %s\n",
					dagRefs(x.ScheduledDags), taskRefs(x.Producing), taskRefs(x.Consuming))
				return nil
			})
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	events := &cobra.Command{
		Use:   "events",
		Short: "List the newest asset events, shown oldest first",
		Long: `Lists the newest --limit asset events (of one asset with --asset, of one partition with
--partition), shown oldest first; --offset skips that many of the newest, to page back in time.
SOURCE is the task try that emitted or produced the event ("task DAG/RUN/TASK try N"), the
callback that emitted it with its run and, for a task's callback, the try that fired it
("callback ID of task DAG/RUN/TASK try N", "callback ID of run DAG/RUN"), api and the user who
posted it, or watcher and the watcher's name.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listThrough(a, cmd, &eventsPF, func(ctx context.Context, b backend, pg store.Page) ([]core.AssetEvent, int, error) {
				pg.OrderBy = "-id" // the newest page, reversed below
				p := &store.AssetEventListParams{Page: pg, PartitionKey: partition}
				if assetName != "" {
					x, err := b.AssetGetByName(ctx, assetName)
					if err != nil {
						return nil, 0, err
					}
					p.AssetID = x.ID
				}
				return b.AssetEventList(ctx, p)
			}, func(evs []core.AssetEvent) error {
				slices.Reverse(evs)
				rows := make([][]string, len(evs))
				for i, e := range evs {
					part := "-"
					if e.PartitionKey != nil {
						part = *e.PartitionKey
					}
					rows[i] = []string{strconv.FormatInt(e.ID, 10), e.Name, part, e.Source().String(), fmtTime(&e.Timestamp), string(e.Extra)}
				}
				return out.print(cmd.OutOrStdout(), nonNilList(evs), []string{"ID", "ASSET", "PARTITION", "SOURCE", "TIMESTAMP", "EXTRA"}, rows)
			})
		},
	}
	events.Flags().StringVar(&assetName, "asset", "", "only events of the asset with this name")
	events.Flags().StringVar(&partition, "partition", "", "only events with this partition key")
	events.AddCommand(a.assetEventCreateCmd())
	eventsPF.add(events, "events", 50)
	out.add(events)

	aliases := &cobra.Command{
		Use:   "aliases [NAME]",
		Short: "List asset aliases, or one, with the assets each resolves to",
		Long: `Lists the asset aliases DAGs declare (or only NAME), one row per alias and asset it
resolves to, with when a successful try first and last added the asset to the alias; an alias
that resolves to nothing yet has one row with "-".`,
		Example: "  weir assets aliases\n  weir assets aliases exports --json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			pg, err := aliasesPF.page()
			if err != nil {
				return err
			}
			return a.withBackend(cmd, func(b backend) error {
				all, err := aliasesOf(cmd, b, argv, &aliasesPF, pg)
				if err != nil {
					return err
				}
				var rows [][]string
				for _, x := range all {
					if len(x.Assets) == 0 {
						rows = append(rows, []string{x.Name, "-", "-", "-"})
					}
					for _, as := range x.Assets {
						rows = append(rows, []string{x.Name, as.Name, fmtTime(&as.FirstAssociatedAt), fmtTime(&as.LastAssociatedAt)})
					}
				}
				return out.print(cmd.OutOrStdout(), nonNilList(all), []string{"ALIAS", "ASSET", "FIRST ASSOCIATED", "LAST ASSOCIATED"}, rows)
			})
		},
	}
	out.add(aliases)
	aliasesPF.add(aliases, "aliases", 100)

	materialize := &cobra.Command{
		Use:   "materialize NAME",
		Short: "Trigger a manual run of the one DAG with a task producing the asset (Airflow's materialize)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(b backend) error {
				x, err := b.AssetGetByName(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				run, err := b.AssetMaterialize(cmd.Context(), x.ID)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "created run %s of %s (state %s)\n", run.RunID, run.DagID, run.State)
				warnPaused(cmd, b, run.DagID, "the run stays queued")
				return nil
			})
		},
	}

	cmd.AddCommand(list, show, events, materialize, aliases, localOnly(taskcli.AddToAliasCmd()), localOnly(taskcli.EmitCmd()), localOnly(taskcli.TriggeringEventsCmd()), a.watchersCmd())
	return cmd
}

// aliasesOf returns the alias named in argv, or the page pg of aliases.
func aliasesOf(cmd *cobra.Command, b backend, argv []string, pf *pageFlags, pg store.Page) ([]store.AssetAlias, error) {
	if len(argv) == 0 {
		list, total, err := b.AssetAliasList(cmd.Context(), &store.AssetAliasListParams{Page: pg})
		return shownPage(cmd, pf, list, total, err)
	}
	one, err := b.AssetAliasGet(cmd.Context(), argv[0])
	if err != nil {
		return nil, aliasNotFound(argv[0], err)
	}
	return []store.AssetAlias{*one}, nil
}

// assetByName finds an asset in the local database, with an error naming
// it when there is none.
func assetByName(ctx context.Context, st interface {
	AssetGetByName(ctx context.Context, name string) (*core.AssetModel, error)
}, name string) (*core.AssetModel, error) {
	x, err := st.AssetGetByName(ctx, name)
	if errors.Is(err, core.ErrNotFound) {
		return nil, noAsset(name)
	}
	return x, err
}

func dagRefs(refs []core.DagRef) string {
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = r.DagID
	}
	return orDash(strings.Join(parts, ", "))
}

func taskRefs(refs []core.TaskRef) string {
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = r.DagID + "." + r.TaskID
	}
	return orDash(strings.Join(parts, ", "))
}

func nonNilList[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
