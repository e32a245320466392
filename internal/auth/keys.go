package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/golang-jwt/jwt/v5"
)

// KeyID returns the key id ("kid") of a signing key: the first 16 hex
// digits of a SHA-256 of the key. It is derived, not chosen, so every
// api-server holding the same key computes the same id, and it reveals
// nothing usable about the key.
func KeyID(key []byte) string {
	sum := sha256.Sum256(append([]byte("weir-kid\x00"), key...))
	return hex.EncodeToString(sum[:8])
}

// UnknownKeyError is the cause of a refusal of a token whose "kid" header
// names no key this process holds: a forged id, a key removed after a
// rotation, or api-servers that do not share their keys.
type UnknownKeyError struct {
	KeyID string
}

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("token was signed with key id %q, which is not one of this api-server's [api_auth] jwt_secret keys "+
		"(removed after a rotation, or the api-servers do not share their keys)", e.KeyID)
}

// keyring holds the signing key and every key that verifies.
type keyring struct {
	signer  []byte
	signKID string
	byID    map[string][]byte
	all     jwt.VerificationKeySet
}

func newKeyring(signer []byte, verify [][]byte) (*keyring, error) {
	r := &keyring{signer: signer, signKID: KeyID(signer), byID: map[string][]byte{}}
	for i, k := range append([][]byte{signer}, verify...) {
		if len(k) < MinKeyBytes {
			if i == 0 {
				return nil, fmt.Errorf("jwt signing key is %d bytes, at least %d are required", len(k), MinKeyBytes)
			}
			return nil, fmt.Errorf("jwt verification key %d is %d bytes, at least %d are required", i+1, len(k), MinKeyBytes)
		}
		id := KeyID(k)
		if _, dup := r.byID[id]; dup {
			continue
		}
		r.byID[id] = k
		r.all.Keys = append(r.all.Keys, k)
	}
	return r, nil
}

// keyFunc picks the verification key of a token by its "kid" header. A
// token without one (issued before key ids) is tried against every key; a
// kid naming no held key is refused before any signature is checked.
func (r *keyring) keyFunc(tok *jwt.Token) (any, error) {
	raw, present := tok.Header["kid"]
	if !present {
		return r.all, nil
	}
	kid, _ := raw.(string)
	if k, ok := r.byID[kid]; ok {
		return k, nil
	}
	return nil, &UnknownKeyError{KeyID: kid}
}

// unknownKey returns the UnknownKeyError inside err, or nil.
func unknownKey(err error) *UnknownKeyError {
	var e *UnknownKeyError
	if errors.As(err, &e) {
		return e
	}
	return nil
}
