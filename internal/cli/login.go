package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/weirflow/weir/internal/apiclient"
)

// loginCmd is `weir login`, as Airflow 3's `airflowctl auth login`: it
// stores a deployment's URL and an API token, after which the admin
// commands go through that deployment's REST API.
func (a *app) loginCmd() *cobra.Command {
	var apiURL, token, username, password, caFile string
	var passwordStdin bool
	var status bool
	cmd := &cobra.Command{
		Use:   "login --api-url URL",
		Short: "Log in to a deployment's REST API; the admin commands then reach it instead of the local database",
		Long: "Stores the deployment's URL and a bearer API token in the user's configuration folder " +
			"($XDG_CONFIG_HOME/weir/credentials.json, else ~/.config/weir/credentials.json), mode 0600, whatever $WEIR_HOME is. " +
			"With a username and password (asked for when not given) the api-server issues a token that lasts a day; " +
			"--token stores a token made with `weir tokens create` instead. " +
			"From then on the admin commands that have a remote transport go through the API and the others refuse to run " +
			"(docs/remote.md lists them); `weir logout` forgets the login.",
		Example: "  weir login --api-url http://weir.example.com:8080\n" +
			"  weir login --api-url http://weir.example.com:8080 --username ci --password \"$WEIR_PASSWORD\"\n" +
			"  weir login --api-url http://weir.example.com:8080 --token \"$WEIR_TOKEN\"\n  weir login --status",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := a.credentialsPath()
			if err != nil {
				return err
			}
			if status {
				return a.loginStatus(cmd, path)
			}
			if apiURL == "" {
				return errors.New("--api-url is required: the address of the deployment's api-server, e.g. http://localhost:8080")
			}
			if token != "" && (username != "" || password != "" || passwordStdin) {
				return errors.New("give either --token or a username and password, not both")
			}
			base, err := apiclient.NormalizeURL(apiURL)
			if err != nil {
				return err
			}
			if passwordStdin {
				if password != "" || username == "" {
					return errors.New("--password-stdin goes with --username, and without --password")
				}
				if password, err = readPasswordLine(cmd.InOrStdin()); err != nil {
					return err
				}
			}
			if fi, err := os.Stat(path); err == nil { // refuse before asking for anything
				if err := privateMode(path, fi); err != nil {
					return err
				}
			}
			if caFile != "" {
				if caFile, err = filepath.Abs(caFile); err != nil {
					return err
				}
			}
			creds := &credentials{APIURL: base, Token: token}
			if token == "" {
				if creds, err = a.passwordLogin(cmd, base, username, password, caFile); err != nil {
					return err
				}
			}
			creds.CAFile = caFile
			me, err := a.whoAmI(cmd.Context(), creds)
			if err != nil {
				return err
			}
			creds.Username, creds.Role = me.Username, me.Role
			if err := saveCredentials(path, creds); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "logged in to %s as %s (%s)%s; credentials stored in %s\n",
				base, creds.Username, creds.Role, expiry(creds), path)
			return nil
		},
	}
	cmd.Flags().StringVar(&apiURL, "api-url", "", "the deployment's api-server, e.g. http://localhost:8080")
	cmd.Flags().StringVar(&token, "token", "", "store this API token (one weir tokens create made) instead of logging in with a password")
	cmd.Flags().StringVar(&username, "username", "", "user to log in as (asked for when not given)")
	cmd.Flags().StringVar(&password, "password", "", "password (asked for, without echo, when not given)")
	cmd.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the password from stdin's first line (scripts: it stays out of the process list and the shell history)")
	cmd.Flags().StringVar(&caFile, "ca-file", "", "PEM file of the CA that signed the api-server's https certificate, trusted besides the system roots (default [workers] tls_ca_file)")
	cmd.Flags().BoolVar(&status, "status", false, "print which deployment and user the stored login is for, and check it is still valid")
	return cmd
}

// readPasswordLine reads a password from r's first line (--password-stdin),
// without its line end.
func readPasswordLine(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the password from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("--password-stdin: stdin holds no password")
	}
	return line, nil
}

// passwordLogin asks for what the flags do not give and trades the username
// and password for a token (POST /api/v2/auth/token).
func (a *app) passwordLogin(cmd *cobra.Command, base, username, password, caFile string) (*credentials, error) {
	in := bufio.NewReader(cmd.InOrStdin())
	var err error
	if username == "" {
		if username, err = a.prompt(cmd, in, "Username: ", false); err != nil {
			return nil, err
		}
	}
	if password == "" {
		if password, err = a.prompt(cmd, in, "Password: ", true); err != nil {
			return nil, err
		}
	}
	if username == "" || password == "" {
		return nil, errors.New("a username and a password are needed to log in (or --token)")
	}
	c, err := a.newAPIClient(base, "", caFile)
	if err != nil {
		return nil, err
	}
	var tok struct {
		AccessToken string    `json:"access_token"`
		ExpiresAt   time.Time `json:"expires_at"`
	}
	body := map[string]string{"username": username, "password": password}
	if err := c.Do(cmd.Context(), "POST", "/auth/token", nil, body, &tok); err != nil {
		var ae *apiclient.Error
		if errors.As(err, &ae) && ae.Status == 401 {
			return nil, fmt.Errorf("log in to %s as %q: invalid username or password", base, username)
		}
		return nil, fmt.Errorf("log in to %s: %w", base, err)
	}
	return &credentials{APIURL: base, Token: tok.AccessToken, ExpiresAt: &tok.ExpiresAt, Issued: true}, nil
}

// prompt asks a question on stderr and reads one line of the answer; a
// secret is read without echo when stdin is the process's terminal.
func (a *app) prompt(cmd *cobra.Command, in *bufio.Reader, question string, secret bool) (string, error) {
	fmt.Fprint(cmd.ErrOrStderr(), question)
	if secret && a.opts.Stdin == nil && term.IsTerminal(int(os.Stdin.Fd())) { //nolint:gosec // a file descriptor fits an int
		b, err := term.ReadPassword(int(os.Stdin.Fd())) //nolint:gosec // as above
		fmt.Fprintln(cmd.ErrOrStderr())
		return strings.TrimSpace(string(b)), err
	}
	line, err := in.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return strings.TrimSpace(line), nil
}

// whoAmI asks the API who the login's token belongs to (GET /api/v2/auth/me).
func (a *app) whoAmI(ctx context.Context, creds *credentials) (*credentials, error) {
	c, err := a.newAPIClient(creds.APIURL, creds.Token, creds.CAFile)
	if err != nil {
		return nil, err
	}
	var me struct {
		Username string `json:"username"`
		Role     string `json:"role"`
	}
	if err := c.Get(ctx, "/auth/me", nil, &me); err != nil {
		return nil, err
	}
	return &credentials{Username: me.Username, Role: me.Role}, nil
}

// loginStatus is `weir login --status`: the stored login, checked against
// its deployment.
func (a *app) loginStatus(cmd *cobra.Command, path string) error {
	creds, err := loadCredentials(path)
	if err != nil {
		return err
	}
	if creds == nil {
		return fmt.Errorf("not logged in (no credentials at %s): the admin commands use the local database; `weir login --api-url URL` logs in", path)
	}
	me, err := a.whoAmI(cmd.Context(), creds)
	if err != nil {
		return err
	}
	creds.Username, creds.Role = me.Username, me.Role
	fmt.Fprintf(cmd.OutOrStdout(), "logged in to %s as %s (%s)%s; credentials in %s\n",
		creds.APIURL, creds.Username, creds.Role, expiry(creds), path)
	return nil
}

// expiry is ", token expires at ..." or "" for a token without expiry.
func expiry(c *credentials) string {
	if c.ExpiresAt == nil {
		return ""
	}
	return ", token expires at " + c.ExpiresAt.UTC().Format(time.RFC3339)
}

// logoutCmd is `weir logout`: it forgets the stored login.
func (a *app) logoutCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "logout",
		Short: "Forget the stored login: the admin commands use the local database again",
		Long: "Removes the credentials `weir login` stored. A token the login issued (username and password) is " +
			"revoked on the server first (DELETE /api/v2/auth/token); when the server cannot be reached it stays valid until " +
			"it expires (a day), and the logout says so. A token given with `weir login --token` is left valid.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := a.credentialsPath()
			if err != nil {
				return err
			}
			creds, lerr := loadCredentials(path)
			if err := os.Remove(path); errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintln(cmd.OutOrStdout(), "not logged in")
				return nil
			} else if err != nil {
				return fmt.Errorf("remove login credentials: %w", err)
			}
			if lerr != nil || creds == nil {
				fmt.Fprintf(cmd.OutOrStdout(), "logged out (removed %s)\n", path)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "logged out of %s (removed %s)\n", creds.APIURL, path)
			if creds.Issued {
				a.revokeLogin(cmd, creds)
			}
			return nil
		},
	}
}

// revokeLogin revokes the token a password login issued, saying on stderr
// when it could not (the token then lasts until it expires).
func (a *app) revokeLogin(cmd *cobra.Command, creds *credentials) {
	c, err := a.newAPIClient(creds.APIURL, creds.Token, creds.CAFile)
	if err == nil {
		err = c.Do(cmd.Context(), "DELETE", "/auth/token", nil, nil, nil)
	}
	var ae *apiclient.Error
	switch {
	case err == nil:
		fmt.Fprintln(cmd.OutOrStdout(), "the login's token is revoked")
	case errors.As(err, &ae) && ae.Status == 401:
		// already expired or revoked: nothing left to revoke
	default:
		fmt.Fprintf(cmd.ErrOrStderr(), "the login's token could not be revoked (%v): it stays valid until it expires%s\n", err, expiry(creds))
	}
}
