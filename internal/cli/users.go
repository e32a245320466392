package cli

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
)

func (a *app) usersCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "users", Short: "Manage users who log in to the API and UI"}
	var username, password, role string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a user; prints a generated password when none is given (an existing user is refused: weir users update changes one)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if username == "" {
				return fmt.Errorf("--username is required")
			}
			generated := password == ""
			if generated {
				password = randomPassword()
			}
			return a.withBackend(cmd, func(b backend) error {
				if err := b.UserCreate(cmd.Context(), username, password, core.Role(role)); err != nil {
					return err
				}
				if generated {
					fmt.Fprintf(cmd.OutOrStdout(), "user %s (%s) created with password: %s\n", username, role, password)
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "user %s (%s) created\n", username, role)
				}
				return nil
			})
		},
	}
	create.Flags().StringVar(&username, "username", "", "login name")
	create.Flags().StringVar(&password, "password", "", "password (generated when empty)")
	create.Flags().StringVar(&role, "role", "viewer", "admin, op or viewer")
	cmd.AddCommand(create)
	cmd.AddCommand(a.usersManageCmds()...)
	return cmd
}

func randomPassword() string {
	b := make([]byte, 15)
	_, _ = rand.Read(b) // crypto/rand never fails on Linux
	return base64.RawURLEncoding.EncodeToString(b)
}
