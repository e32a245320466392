package cli

import (
	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/config"
)

// tokens builds the signer of task and worker tokens from the key file
// (created on first use, 0600).
func tokensFor(cfg *config.Config) (*auth.Tokens, error) {
	key, err := config.Secret(cfg.APIAuth.JWTSecretFile, 64)
	if err != nil {
		return nil, err
	}
	return auth.NewTokens(auth.Config{Key: []byte(key), ExecutionTTL: cfg.APIAuth.JWTExpirationTime.D()}, nil)
}

// sessionKey returns the key that signs UI sessions.
func sessionKey(cfg *config.Config) ([]byte, error) {
	key, err := config.Secret(cfg.APIAuth.SecretKeyFile, 32)
	return []byte(key), err
}
