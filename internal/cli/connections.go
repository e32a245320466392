package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/store"
)

// connectionsCmd manages connections stored in the database. Connections in
// weir.toml and WEIR_CONN_<ID> are listed too; they take precedence on
// workers that have them.
func (a *app) connectionsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "connections", Short: "Manage connections used by sql and http tasks (passwords are never printed)"}
	var connURI string
	add := &cobra.Command{
		Use:   "add CONN_ID URI",
		Short: "Store (or replace) a connection in the database",
		Example: "  weir connections add warehouse 'postgres://etl:secret@db:5432/dw'\n  weir connections add api https://api.example.com\n" +
			"  weir connections add api --conn-uri https://api.example.com   # Airflow's spelling",
		Args: func(cmd *cobra.Command, args []string) error {
			if connURI != "" {
				return cobra.ExactArgs(1)(cmd, args)
			}
			return cobra.ExactArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			id, uri := args[0], connURI
			if uri == "" {
				uri = args[1]
			}
			return a.withBackend(cmd, func(b backend) error {
				if err := b.ConnectionAdd(cmd.Context(), core.Connection{ID: id, URI: uri}); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "connection %s = %s\n", id, secrets.RedactURI(uri))
				return nil
			})
		},
	}
	add.Flags().StringVar(&connURI, "conn-uri", "", "the connection URI, as Airflow's connections add takes it (instead of the URI argument)")
	var out output
	list := &cobra.Command{
		Use:   "list",
		Short: "List connections from the database and from the configuration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withBackend(cmd, func(b backend) error {
				conns, _, err := b.ConnectionList(cmd.Context(), &store.ConnectionListParams{Page: store.Page{Limit: 1000}}) // a short list, with the configuration's
				if err != nil {
					return err
				}
				var rows [][]string
				for _, c := range conns {
					rows = append(rows, []string{c.ID, c.URI, "database"})
				}
				for id, uri := range b.ConfigConnections() {
					rows = append(rows, []string{id, secrets.RedactURI(uri), "config"})
				}
				sort.Slice(rows, func(i, j int) bool { return strings.Join(rows[i], " ") < strings.Join(rows[j], " ") })
				type listed struct {
					ConnID string `json:"connection_id"`
					URI    string `json:"uri"`
					Source string `json:"source"`
				}
				items := make([]listed, len(rows))
				for i, r := range rows {
					items[i] = listed{r[0], r[1], r[2]}
				}
				return out.print(cmd.OutOrStdout(), items, []string{"CONN_ID", "URI", "SOURCE"}, rows)
			})
		},
	}
	out.add(list)
	del := &cobra.Command{
		Use:   "delete CONN_ID",
		Short: "Delete a connection from the database",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(b backend) error {
				if err := b.ConnectionDelete(cmd.Context(), args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "connection %s deleted\n", args[0])
				return nil
			})
		},
	}
	cmd.AddCommand(add, list, del, localOnly(a.rotateKeyCmd()))
	return cmd
}
