package cli

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/config"
)

// keysCmd is `weir keys`: list, generate and rotate the keys of [api_auth]
// jwt_secret_file (tokens) or, with --session, secret_key_file (logins).
func (a *app) keysCmd() *cobra.Command {
	var session bool
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "List and rotate the keys that sign tokens (jwt_secret) and login sessions (secret_key)",
		Long: `The keys of [api_auth] jwt_secret_file (task tokens and worker credentials; with --session, the
keys of secret_key_file, login sessions). The file holds one key per line: the first signs, every one
verifies. Every api-server must hold the same keys. A fleet rotates in three steps, each one finished on
every api-server (copy the file and restart) before the next: add (the new key verifies everywhere),
promote (the new key signs), remove the old key once the tokens it signed have expired (worker
credentials: their --ttl). When [api_auth] jwt_secret or secret_key is set (inline or from the
environment), edit that value instead: "weir keys generate" prints a new key.`,
	}
	cmd.PersistentFlags().BoolVar(&session, "session", false, "the login session keys ([api_auth] secret_key_file) instead of the token keys")
	kind := func() keyKind {
		if session {
			return sessionKeyKind
		}
		return jwtKeys
	}
	list := &cobra.Command{
		Use: "list", Short: "List the keys by id, the signing one first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.config()
			if err != nil {
				return err
			}
			keys, err := signingKeys(cfg, kind())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for i, k := range keys {
				use := "verifies"
				if i == 0 {
					use = "signs"
				}
				fmt.Fprintf(out, "%s\t%s\n", auth.KeyID(k), use)
			}
			return nil
		},
	}
	generate := &cobra.Command{
		Use: "generate", Short: "Print a new random key (for [api_auth] jwt_secret or secret_key set inline); changes nothing", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), newKeyText(kind()))
			return nil
		},
	}
	edit := func(use, short string, args cobra.PositionalArgs, change func(k keyKind, keys []string, args []string) ([]string, string, error)) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Args: args,
			RunE: func(cmd *cobra.Command, args []string) error {
				return a.editKeys(cmd, kind(), func(keys []string) ([]string, string, error) { return change(kind(), keys, args) })
			}}
	}
	add := edit("add", "Add a new key that verifies but does not sign yet (step 1 of a rotation)", cobra.NoArgs,
		func(k keyKind, keys, _ []string) ([]string, string, error) {
			key := newKeyText(k)
			return append(keys, key), fmt.Sprintf("added key %s (verifies only); copy the file to every api-server, restart them, then run weir keys promote %s",
				auth.KeyID([]byte(key)), auth.KeyID([]byte(key))), nil
		})
	promote := edit("promote KEY_ID", "Make a key the one that signs (step 2 of a rotation); the others keep verifying", cobra.ExactArgs(1),
		func(_ keyKind, keys, args []string) ([]string, string, error) {
			i, err := keyIndex(keys, args[0])
			if err != nil {
				return nil, "", err
			}
			out := append([]string{keys[i]}, slices.Delete(slices.Clone(keys), i, i+1)...)
			return out, fmt.Sprintf("key %s signs now; copy the file to every api-server and restart them", args[0]), nil
		})
	remove := edit("remove KEY_ID", "Remove a key that no longer signs (step 3 of a rotation): tokens it signed are refused", cobra.ExactArgs(1),
		func(_ keyKind, keys, args []string) ([]string, string, error) {
			i, err := keyIndex(keys, args[0])
			if err != nil {
				return nil, "", err
			}
			if i == 0 {
				return nil, "", fmt.Errorf("key %s is the signing key; promote another key before removing it", args[0])
			}
			return slices.Delete(slices.Clone(keys), i, i+1), fmt.Sprintf("removed key %s; tokens it signed are refused once every api-server has the file and restarted", args[0]), nil
		})
	rotate := edit("rotate", "Add a new key and make it sign at once (api-servers restarted together: one machine); old keys keep verifying", cobra.NoArgs,
		func(k keyKind, keys, _ []string) ([]string, string, error) {
			key := newKeyText(k)
			return append([]string{key}, keys...), fmt.Sprintf("key %s signs now; the older keys verify until weir keys remove", auth.KeyID([]byte(key))), nil
		})
	cmd.AddCommand(list, generate, add, promote, remove, rotate)
	return cmd
}

// editKeys rewrites the key file of kind with change's result (atomically,
// 0600) and prints its message; with the keys set inline it refuses.
func (a *app) editKeys(cmd *cobra.Command, kind keyKind, change func(keys []string) ([]string, string, error)) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	if kind.inline(cfg) != "" {
		return fmt.Errorf("[api_auth] %s is set (in weir.toml or as WEIR__API_AUTH__%s), so %s_file is not used: edit that value "+
			"(weir keys generate prints a new key); nothing was changed", kind.option, strings.ToUpper(kind.option), kind.option)
	}
	raw, err := signingKeys(cfg, kind)
	if err != nil {
		return err
	}
	keys := make([]string, len(raw))
	for i, k := range raw {
		keys[i] = string(k)
	}
	keys, msg, err := change(keys)
	if err != nil {
		return err
	}
	if err := config.ReplaceSecret(kind.file(cfg), strings.Join(keys, "\n")+"\n"); err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), msg)
	return nil
}

// keyIndex finds a key by its id.
func keyIndex(keys []string, id string) (int, error) {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = auth.KeyID([]byte(k))
		if ids[i] == id {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no key has id %q; the keys are %s (weir keys list)", id, strings.Join(ids, ", "))
}

// newKeyText returns a new random key of kind, hex-encoded.
func newKeyText(k keyKind) string {
	b := make([]byte, k.newSize)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}
