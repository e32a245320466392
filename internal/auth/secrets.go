package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"

	"golang.org/x/crypto/bcrypt"

	"github.com/weirflow/weir/internal/core"
)

// TokenPrefix starts every API token secret.
const TokenPrefix = "weir_"

// NewToken returns a new random API token secret ("weir_" + 43 characters)
// and the hash under which the store keeps it (core.APIToken.Hash).
func NewToken() (secret, hash string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it aborts the program instead)
	secret = TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	return secret, HashToken(secret)
}

// HashToken returns the hex SHA-256 of a token secret, as stored.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// HashPassword returns the bcrypt hash of a password (core.User.PasswordHash).
func HashPassword(password string) (string, error) {
	if password == "" {
		return "", fmt.Errorf("password must not be empty: %w", core.ErrInvalid)
	}
	if len(password) > 72 { // bcrypt reads no further
		return "", fmt.Errorf("password is %d bytes long; at most 72 are allowed: %w", len(password), core.ErrInvalid)
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}
