package cli

import (
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/secrets"
)

// tokens builds the signer of task and worker tokens from the key file
// (created on first use, 0600).
func tokensFor(cfg *config.Config) (*auth.Tokens, error) {
	key, err := config.Secret(cfg.APIAuth.JWTSecretFile, 64)
	if err != nil {
		return nil, err
	}
	// A callback's token outlives its command's timeout by the time its
	// log and report take.
	return auth.NewTokens(auth.Config{Key: []byte(key), ExecutionTTL: cfg.APIAuth.JWTExpirationTime.D(),
		CallbackTTL: cfg.Callbacks.Timeout.D() + 5*time.Minute}, nil)
}

// sessionKey returns the key that signs UI sessions.
func sessionKey(cfg *config.Config) ([]byte, error) {
	key, err := config.Secret(cfg.APIAuth.SecretKeyFile, 32)
	return []byte(key), err
}

// secretsBox returns the box that encrypts connections, over the key file
// [core] secrets_key_file (created with one new key on first use, 0600).
func secretsBox(cfg *config.Config) (*secrets.Box, error) {
	text, err := config.Secret(cfg.Core.SecretsKeyFile, secrets.KeyBytes)
	if err != nil {
		return nil, fmt.Errorf("[core] secrets_key_file: %w", err)
	}
	keys, err := secrets.ParseKeys(text)
	if err != nil {
		return nil, fmt.Errorf("[core] secrets_key_file %s: %w", cfg.Core.SecretsKeyFile, err)
	}
	return secrets.New(keys)
}
