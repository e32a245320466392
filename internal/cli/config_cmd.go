package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func (a *app) configCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Show the configuration"}
	list := &cobra.Command{
		Use:   "list",
		Short: "List every option with its effective value (passwords redacted)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.config()
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "SECTION\tKEY\tVALUE")
			for _, o := range cfg.List() {
				fmt.Fprintf(w, "%s\t%s\t%s\n", o.Section, o.Key, o.Value)
			}
			return w.Flush()
		},
	}
	get := &cobra.Command{
		Use:   "get-value SECTION KEY",
		Short: "Print one option's effective value",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := a.config()
			if err != nil {
				return err
			}
			v, err := cfg.Get(args[0], args[1])
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), v)
			return nil
		},
	}
	cmd.AddCommand(list, get)
	return cmd
}
