package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// usersManageCmds are `weir users list|get|update|delete`, as Airflow's
// `users list` and `users delete`, locally or through the REST API.
func (a *app) usersManageCmds() []*cobra.Command {
	var (
		pf          pageFlags
		out, getOut output
		user        string
		password    string
		role        string
		yes         bool
		delUser     string
	)
	list := &cobra.Command{
		Use:   "list",
		Short: "List users by username, with their role",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listThrough(a, cmd, &pf, func(ctx context.Context, b backend, pg store.Page) ([]api.UserResponse, int, error) {
				return b.UserList(ctx, &store.UserListParams{Page: pg})
			}, func(users []api.UserResponse) error { return printUsers(cmd, &out, users) })
		},
	}
	pf.add(list, "users", 100)
	out.add(list)

	get := &cobra.Command{
		Use:   "get USERNAME",
		Short: "Show a user and its role",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(b backend) error {
				u, err := b.UserGet(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				return printUsers(cmd, &getOut, []api.UserResponse{*u})
			})
		},
	}
	getOut.add(get)

	update := &cobra.Command{
		Use:     "update --username USERNAME [--role ROLE] [--password PASSWORD]",
		Short:   "Change an existing user's role or password",
		Example: "  weir users update --username ada --role op\n  weir users update --username ada --password \"$NEW_PASSWORD\"",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if user == "" {
				return errors.New("--username is required")
			}
			var ch service.UserChange
			if cmd.Flags().Changed("password") {
				ch.Password = &password
			}
			if cmd.Flags().Changed("role") {
				r := core.Role(role)
				ch.Role = &r
			}
			return a.withBackend(cmd, func(b backend) error {
				u, err := b.UserUpdate(cmd.Context(), user, ch)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "user %s updated (%s)\n", u.Username, u.Role)
				return nil
			})
		},
	}
	update.Flags().StringVarP(&user, "username", "u", "", "the user to change")
	update.Flags().StringVar(&password, "password", "", "the new password")
	update.Flags().StringVar(&role, "role", "", "the new role: admin, op or viewer")

	del := &cobra.Command{
		Use:   "delete --username USERNAME",
		Short: "Delete a user and its API tokens; asks first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if delUser == "" {
				return errors.New("--username is required")
			}
			return a.withBackend(cmd, func(b backend) error {
				if _, err := b.UserGet(cmd.Context(), delUser); err != nil {
					return err
				}
				if !yes && !confirm(cmd.InOrStdin(), cmd.OutOrStdout(), fmt.Sprintf("Delete user %s and its API tokens?", delUser)) {
					return errors.New("nothing deleted (answer y, or pass --yes to delete without asking)")
				}
				if err := b.UserDelete(cmd.Context(), delUser); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "deleted user %s\n", delUser)
				return nil
			})
		},
	}
	del.Flags().StringVarP(&delUser, "username", "u", "", "the user to delete")
	del.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking for confirmation")
	return []*cobra.Command{list, get, update, del}
}

// printUsers prints users as a table or as -o asks.
func printUsers(cmd *cobra.Command, out *output, users []api.UserResponse) error {
	rows := make([][]string, len(users))
	for i, u := range users {
		rows[i] = []string{u.Username, string(u.Role), fmtTime(&users[i].CreatedAt)}
	}
	return out.print(cmd.OutOrStdout(), nonNilList(users), []string{"USERNAME", "ROLE", "CREATED"}, rows)
}
