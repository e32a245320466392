package statevalue_test

import (
	"errors"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statevalue"
)

// FuzzCheckKey checks that CheckKey never panics and refuses with
// core.ErrInvalid.
func FuzzCheckKey(f *testing.F) {
	for _, s := range []string{"k", "", ".", "..", "a/b", "\x00", "\xff", "ключ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if err := statevalue.CheckKey(key); err != nil && !errors.Is(err, core.ErrInvalid) {
			t.Fatalf("%q: error %v does not wrap ErrInvalid", key, err)
		}
	})
}
