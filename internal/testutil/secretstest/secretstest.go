// Package secretstest gives tests a secrets box with a fixed key, so that
// test stores encrypt connections as production stores do.
package secretstest

import (
	"strings"

	"github.com/weirflow/weir/internal/secrets"
)

// Key is the test key, as a key file line.
var Key = strings.Repeat("5e", secrets.KeyBytes)

// Box returns a box over Key.
func Box() *secrets.Box {
	keys, err := secrets.ParseKeys(Key)
	if err != nil {
		panic(err) // Key is a constant of the right length
	}
	b, err := secrets.New(keys)
	if err != nil {
		panic(err)
	}
	return b
}
