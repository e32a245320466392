package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

func (a *app) tokensCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "tokens", Short: "Issue, list and revoke API tokens (for scripts) and worker credentials"}
	var name, user, worker string
	var ttl time.Duration
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a bearer API token for a user, or (--worker NAME) a worker credential",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if worker != "" {
				cfg, err := a.config()
				if err != nil {
					return err
				}
				tok, err := tokensFor(cfg)
				if err != nil {
					return err
				}
				s, err := tok.IssueWorker(worker, ttl)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), s)
				return nil
			}
			if user == "" {
				return fmt.Errorf("--user is required (the token acts with that user's role)")
			}
			return a.withService(cmd.Context(), func(_ *config.Config, svc *service.Service) error {
				secret, err := svc.CreateAPIToken(cmd.Context(), a.cliActor(), user, name, ttl)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), secret)
				return nil
			})
		},
	}
	create.Flags().StringVar(&name, "name", "cli", "a label for the token")
	create.Flags().StringVar(&user, "user", "", "user the token acts as")
	create.Flags().StringVar(&worker, "worker", "", "issue a worker credential for this worker name instead")
	create.Flags().DurationVar(&ttl, "ttl", 0, "lifetime (0 = no expiry for API tokens, one year for worker credentials)")
	cmd.AddCommand(create, a.tokensListCmd(), a.tokensRevokeCmd())
	return cmd
}

func (a *app) tokensListCmd() *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List API tokens (id, name, user, created, expires; never the secret)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(cmd.Context(), func(_ *config.Config, st *sqlstore.Store) error {
				toks, err := st.APITokenList(cmd.Context())
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "ID\tNAME\tUSER\tCREATED\tEXPIRES")
				for _, t := range toks {
					exp := "never"
					if t.ExpiresAt != nil {
						exp = t.ExpiresAt.UTC().Format(time.RFC3339)
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, t.Username, t.CreatedAt.UTC().Format(time.RFC3339), exp)
				}
				return w.Flush()
			})
		},
	}
}

func (a *app) tokensRevokeCmd() *cobra.Command {
	var worker string
	cmd := &cobra.Command{
		Use:   "revoke [TOKEN_ID]",
		Short: "Revoke an API token by id, or (--worker NAME) every credential issued to a worker so far",
		Long: `Revokes an API token (its id from weir tokens list): every api-server refuses it from its next
request. With --worker NAME, revokes every worker credential issued to NAME up to now (to the second):
every api-server refuses them within 2 seconds, and the worker exits with an error naming the revocation.
A credential issued for NAME afterwards is valid.`,
		Args: func(_ *cobra.Command, args []string) error {
			if (worker == "") == (len(args) == 0) || len(args) > 1 {
				return fmt.Errorf("give one API token id, or --worker NAME (not both)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withService(cmd.Context(), func(_ *config.Config, svc *service.Service) error {
				if worker != "" {
					if err := svc.RevokeWorkerCredentials(cmd.Context(), a.cliActor(), worker); err != nil {
						return err
					}
					fmt.Fprintf(cmd.OutOrStdout(), "revoked the credentials of worker %s issued so far\n", worker)
					return nil
				}
				if err := svc.RevokeAPIToken(cmd.Context(), a.cliActor(), args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "revoked API token %s\n", args[0])
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&worker, "worker", "", "revoke this worker's credentials instead of an API token")
	return cmd
}
