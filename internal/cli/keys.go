package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/secrets"
)

// tokensFor builds the signer of task and worker tokens from [api_auth]
// jwt_secret, else its key file (created with one key on first use, 0600).
func tokensFor(cfg *config.Config) (*auth.Tokens, error) {
	keys, err := signingKeys(cfg, jwtKeys)
	if err != nil {
		return nil, err
	}
	// A callback's token outlives its command's timeout by the time its
	// log and report take.
	return auth.NewTokens(auth.Config{Key: keys[0], VerifyKeys: keys[1:], ExecutionTTL: cfg.APIAuth.JWTExpirationTime.D(),
		CallbackTTL: cfg.Callbacks.Timeout.D() + 5*time.Minute}, nil)
}

// sessionKeys returns the keys of login sessions: the first signs, every
// one verifies.
func sessionKeys(cfg *config.Config) ([][]byte, error) {
	return signingKeys(cfg, sessionKeyKind)
}

// keyKind names one of the two [api_auth] key lists.
type keyKind struct {
	option  string // the inline option; its file option is option+"_file"
	min     int    // shortest key, in characters
	newSize int    // random bytes of a generated key (hex-encoded)
	inline  func(*config.Config) string
	file    func(*config.Config) string
}

var (
	jwtKeys = keyKind{option: "jwt_secret", min: config.MinJWTKeyLen, newSize: 64,
		inline: func(c *config.Config) string { return c.APIAuth.JWTSecret },
		file:   func(c *config.Config) string { return c.APIAuth.JWTSecretFile }}
	sessionKeyKind = keyKind{option: "secret_key", min: config.MinSessionKeyLen, newSize: 32,
		inline: func(c *config.Config) string { return c.APIAuth.SecretKey },
		file:   func(c *config.Config) string { return c.APIAuth.SecretKeyFile }}
)

// hasSigningKeys says whether this machine holds keys of kind: the inline
// option, or its file.
func hasSigningKeys(cfg *config.Config, kind keyKind) bool {
	if kind.inline(cfg) != "" {
		return true
	}
	_, err := os.Stat(kind.file(cfg))
	return err == nil
}

// signingKeys reads the keys of kind: the inline option when set, else its
// file (created with one random key when missing).
func signingKeys(cfg *config.Config, kind keyKind) ([][]byte, error) {
	text, where := kind.inline(cfg), "[api_auth] "+kind.option
	if text == "" {
		path := kind.file(cfg)
		var err error
		if text, err = config.Secret(path, kind.newSize); err != nil {
			return nil, fmt.Errorf("[api_auth] %s_file: %w", kind.option, err)
		}
		where = fmt.Sprintf("[api_auth] %s_file %s", kind.option, path)
	}
	keys, err := config.SplitKeys(text, kind.min)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = []byte(k)
	}
	return out, nil
}

// secretsBox returns the box that encrypts connections, over the key file
// [core] secrets_key_file (created with one new key on first use, 0600).
// The box reads the file again for a value sealed under a key it lacks
// (secrets.Reloading): a rotation by `weir connections rotate-key` on this
// machine needs no restart of the processes reading it. Only the first
// read creates the file; a reload reads it as it is, and fails (keeping
// the keys) when it is gone.
func secretsBox(cfg *config.Config) (*secrets.Box, error) {
	path := cfg.Core.SecretsKeyFile
	text, err := config.Secret(path, secrets.KeyBytes) // created with one new key when missing
	if err != nil {
		return nil, fmt.Errorf("[core] secrets_key_file: %w", err)
	}
	parse := func(text string) ([][]byte, error) {
		keys, err := secrets.ParseKeys(text)
		if err != nil {
			return nil, fmt.Errorf("[core] secrets_key_file %s: %w", path, err)
		}
		return keys, nil
	}
	keys, err := parse(text)
	if err != nil {
		return nil, err
	}
	return secrets.Reloading(keys, func() ([][]byte, error) {
		b, err := os.ReadFile(path) //nolint:gosec // the operator's own key file
		if err != nil {
			return nil, fmt.Errorf("[core] secrets_key_file: %w", err)
		}
		return parse(string(b))
	})
}
