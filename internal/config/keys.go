package config

import (
	"fmt"
	"strings"
)

// Shortest keys accepted in [api_auth] jwt_secret and secret_key (and their
// files), in characters.
const (
	MinJWTKeyLen     = 32
	MinSessionKeyLen = 16
)

// SplitKeys splits a key list (a key file's content, or an inline
// [api_auth] value) into its keys: separated by new lines, commas or
// spaces, the first being the one that signs. An empty list, or a key
// shorter than minLen, is an error naming the key by position, never by
// content.
func SplitKeys(text string, minLen int) ([]string, error) {
	keys := strings.FieldsFunc(text, func(r rune) bool {
		return r == ',' || r == '\n' || r == '\r' || r == ' ' || r == '\t'
	})
	if len(keys) == 0 {
		return nil, fmt.Errorf("holds no key")
	}
	for i, k := range keys {
		if len(k) < minLen {
			return nil, fmt.Errorf("key %d is %d characters long; at least %d are required", i+1, len(k), minLen)
		}
	}
	return keys, nil
}
