package stateref_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/stateref"
)

// For either kind, a reference whose object is gone is ErrMissingObject
// naming the reference, never an absent key (which would silently yield a
// default); values stored inline (before the backend was configured) still
// read; a reference to another scope's object is refused, not followed;
// bad input is refused before anything is written (docs/state-backends.md).
func TestMissingObjectInlineAndForgedRef(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kind        string
		run         func(e *env, t *testing.T) *execclient.Client
		write, read core.StateScope // the same scope, named two ways for asset state
		ref, forged string
	}{
		{"task", func(e *env, t *testing.T) *execclient.Client { return e.mappedRun(t, "r1", 1)[0] },
			ownTask, ownTask, "task/d/r1/t/0/k", "task/other/r/t/-1/secret"},
		{"asset", (*env).assetRun, byURI, byName, "asset/orders/k", "asset/ledger/secret"},
	} {
		t.Run(c.kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			client := c.run(e, t)
			st := openStore(t, "file://"+filepath.Join(t.TempDir(), "state"))
			s := wrap(t, client, st, nil)
			if err := s.StateSet(ctx, c.write, "n", json.RawMessage(`null`), ""); !errors.Is(err, core.ErrInvalid) {
				t.Errorf("set null: %v, want invalid", err)
			}
			if keys := list(t, st, ""); len(keys) != 0 {
				t.Errorf("objects %v after a refused set, want none", keys)
			}
			if err := s.StateSet(ctx, c.write, "k", json.RawMessage(`1`), ""); err != nil {
				t.Fatal(err)
			}
			if err := st.Delete(ctx, c.ref); err != nil {
				t.Fatal(err)
			}
			_, err := s.StateGet(ctx, c.read, "k")
			if !errors.Is(err, stateref.ErrMissingObject) || errors.Is(err, core.ErrNotFound) || !strings.Contains(err.Error(), c.ref) {
				t.Errorf("get with the object gone: %v, want ErrMissingObject naming %s", err, c.ref)
			}
			for key, value := range map[string]json.RawMessage{"inline": json.RawMessage(`{"a":1}`), "forged": stateref.Encode(c.forged)} {
				if err := client.StateSet(ctx, c.read, key, value, ""); err != nil {
					t.Fatal(err)
				}
			}
			if got, err := s.StateGet(ctx, c.write, "inline"); err != nil || string(got) != `{"a":1}` {
				t.Errorf("inline value = %s, %v", got, err)
			}
			if _, err := s.StateGet(ctx, c.read, "forged"); !errors.Is(err, core.ErrInvalid) {
				t.Errorf("get of a reference to another scope: %v, want invalid", err)
			}
		})
	}
}
