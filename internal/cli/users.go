package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

func (a *app) usersCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "users", Short: "Manage users who log in to the API and UI"}
	var username, password, role string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create (or update) a user; prints a generated password when none is given",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !core.Role(role).Valid() {
				return fmt.Errorf("--role %q: want admin, op or viewer", role)
			}
			if username == "" {
				return fmt.Errorf("--username is required")
			}
			generated := password == ""
			if generated {
				password = randomPassword()
			}
			return a.withStore(cmd.Context(), func(_ *config.Config, st *sqlstore.Store) error {
				if err := createUser(cmd.Context(), st, username, password, role); err != nil {
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
	return cmd
}

// createUser stores a user with a bcrypt hash of the password.
func createUser(ctx context.Context, st store.Store, username, password, role string) error {
	hash, err := api.HashPassword(password)
	if err != nil {
		return err
	}
	return st.UserUpsert(ctx, &core.User{Username: username, PasswordHash: hash, Role: role, CreatedAt: time.Now().UTC()})
}

func randomPassword() string {
	b := make([]byte, 15)
	_, _ = rand.Read(b) // crypto/rand never fails on Linux
	return base64.RawURLEncoding.EncodeToString(b)
}
