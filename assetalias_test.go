package weir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// docs/requirements.md#as-2 from the Go SDK: tc.AddToAlias adds a concrete asset to an
// alias outlet, which the success records as an event and an association;
// a downstream task with the alias as an inlet then reaches the asset's
// state; bad arguments and an undeclared alias are refused.
func TestAddToAliasFromGo(t *testing.T) {
	t.Parallel()
	orders, dyn := Asset("orders"), Alias("dyn")
	d := NewDAG("sdk_alias")
	define := d.Noop("define", Outlets(orders)) // some task must define orders
	export := d.Go("export", func(ctx context.Context, tc *TaskContext) (any, error) {
		if err := tc.AddToAlias(ctx, orders, orders, nil); err == nil || !strings.Contains(err.Error(), "must be an alias") {
			return nil, fmt.Errorf("an asset as the alias: %w", err)
		}
		if err := tc.AddToAlias(ctx, dyn, dyn, nil); err == nil || !strings.Contains(err.Error(), "must be concrete") {
			return nil, fmt.Errorf("an alias as the asset: %w", err)
		}
		if err := tc.AddToAlias(ctx, Alias("other"), orders, nil); !errors.Is(err, core.ErrForbidden) {
			return nil, fmt.Errorf("an undeclared alias: %w, want forbidden", err)
		}
		return nil, tc.AddToAlias(ctx, dyn, orders, map[string]any{"rows": 2})
	}, Outlets(dyn), DependsOn(define))
	d.Go("read", func(ctx context.Context, tc *TaskContext) (any, error) {
		return nil, tc.AssetState().Set(ctx, "seen", true) // the shorthand: dyn resolves to orders only
	}, Inlets(dyn), DependsOn(export))

	home := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"dags", "test", "sdk_alias", "--home", home}, &stdout, &stderr, []*DAG{d}); code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	st := openStore(t, home)
	evs, err := st.AssetEventList(t.Context(), &store.AssetEventListParams{SourceTaskID: "export"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Name != "orders" || string(evs[0].Extra) != `{"rows":2}` {
		t.Errorf("events of export = %+v, want one of orders with extra rows 2", evs)
	}
	rows, err := st.StateList(t.Context(), &store.StateListParams{Kind: core.StateAsset})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Scope.AssetName != "orders" || rows[0].UpdatedBy.TaskID != "read" {
		t.Errorf("asset state = %+v, want orders/seen written by read", rows)
	}
}
