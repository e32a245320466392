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
	"github.com/weirflow/weir/internal/stateobj"
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
		row, forged string
	}{
		{"task", func(e *env, t *testing.T) *execclient.Client { return e.mappedRun(t, "r1", 1)[0] },
			ownTask, ownTask, "r1/t/0/k", "task/other/r/t/-1/secret"},
		{"asset", (*env).assetRun, byURI, byName, "orders/k", "asset/ledger/secret"},
	} {
		t.Run(c.kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			client := c.run(e, t)
			st := openStore(t, "file://"+filepath.Join(t.TempDir(), "state"))
			s := wrap(t, client, st)
			if err := s.StateSet(ctx, c.write, "n", json.RawMessage(`null`), ""); !errors.Is(err, core.ErrInvalid) {
				t.Errorf("set null: %v, want invalid", err)
			}
			if keys := list(t, st, ""); len(keys) != 0 {
				t.Errorf("objects %v after a refused set, want none", keys)
			}
			if err := s.StateSet(ctx, c.write, "k", json.RawMessage(`1`), ""); err != nil {
				t.Fatal(err)
			}
			rows := e.rows(t)
			if c.kind == "asset" {
				rows = e.assetRows(t)
			}
			ref := refIn(t, rows[c.row])
			if err := st.Delete(ctx, ref); err != nil {
				t.Fatal(err)
			}
			_, err := s.StateGet(ctx, c.read, "k")
			if !errors.Is(err, stateref.ErrMissingObject) || errors.Is(err, core.ErrNotFound) || !strings.Contains(err.Error(), ref) {
				t.Errorf("get with the object gone: %v, want ErrMissingObject naming %s", err, ref)
			}
			if err := client.StateSet(ctx, c.read, "inline", json.RawMessage(`{"a":1}`), ""); err != nil {
				t.Fatal(err)
			}
			if got, err := s.StateGet(ctx, c.write, "inline"); err != nil || string(got) != `{"a":1}` {
				t.Errorf("inline value = %s, %v", got, err)
			}
			// A reference to another scope's object is refused by the
			// server (the sweep would delete what it names), and one with
			// another member too.
			for _, v := range []string{stateobj.ValuePrefix + c.forged + `"}`, stateobj.ValuePrefix + ref + `","x":1}`} {
				if err := client.StateSet(ctx, c.read, "forged", json.RawMessage(v), ""); !errors.Is(err, core.ErrInvalid) {
					t.Errorf("set of %s: %v, want invalid", v, err)
				}
			}
		})
	}
}
