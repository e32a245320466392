package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/secrets"
)

// rotateKeyCmd is `weir connections rotate-key`: a new key first in the
// key file (the old ones kept after it, so rows and nodes not yet
// re-encrypted stay readable), then every connection and variable re-encrypted under it
// in one transaction.
func (a *app) rotateKeyCmd() *cobra.Command {
	var reencryptOnly bool
	cmd := &cobra.Command{
		Use:   "rotate-key",
		Short: "Encrypt every stored connection and variable under a new key (old keys stay readable until removed)",
		Long: `Adds a new random key as the first line of [core] secrets_key_file, keeping the old keys after
it, and re-encrypts every connection and variable in the database under the new key in one transaction (rows
stored in plain text by older versions are encrypted too). On a failure nothing in the database
changes, and the file still holds the old keys. With --reencrypt-only no key is added: the rows are
re-encrypted under the file's first key, for deployments that distribute a new key file to every
node first. Once every node reads the new file, the old lines may be deleted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.config()
			if err != nil {
				return err
			}
			path := cfg.Core.SecretsKeyFile
			text, err := config.Secret(path, secrets.KeyBytes)
			if err != nil {
				return fmt.Errorf("[core] secrets_key_file: %w", err)
			}
			if _, err := secrets.ParseKeys(text); err != nil {
				return fmt.Errorf("[core] secrets_key_file %s: %w", path, err)
			}
			if !reencryptOnly {
				if err := config.ReplaceSecret(path, secrets.NewKey()+"\n"+strings.TrimSpace(text)+"\n"); err != nil {
					return err
				}
			}
			st, err := openStore(cmd.Context(), cfg, false, false, 0, newLogger(a.opts.Stderr, cfg.Logging.Level))
			if err != nil {
				return err
			}
			defer st.Close()
			n, err := st.Reseal(cmd.Context())
			if err != nil {
				return err
			}
			box, err := secretsBox(cfg)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "re-encrypted %d connections and %d variables under key %s; older keys stay in %s for reading until you remove them\n",
				n.Connections, n.Variables, box.PrimaryID(), path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&reencryptOnly, "reencrypt-only", false, "add no key: re-encrypt under the key file's first key")
	return cmd
}
