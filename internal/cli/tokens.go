package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/service"
)

func (a *app) tokensCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "tokens", Short: "Issue API tokens (for scripts) and worker credentials"}
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
	cmd.AddCommand(create)
	return cmd
}
