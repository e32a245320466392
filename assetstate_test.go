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

// docs/requirements.md#as-2, #as-3, #as-4, #as-6 from the Go SDK: the shorthand reaches the
// task's only asset; GetAssetState and Get read with a default; nil is
// refused; a task with several (or no) assets gets "task has N concrete
// inlets and outlets"; an undeclared asset is forbidden; an alias is
// refused; the write records the task try as its writer.
func TestAssetStateFromGo(t *testing.T) {
	t.Parallel()
	wm, orders, customers := Asset("wm"), Asset("orders"), Asset("customers")
	d := NewDAG("sdk_asset_state")
	load := d.Go("load", func(ctx context.Context, tc *TaskContext) (any, error) {
		st := tc.AssetState()
		if _, ok, err := GetAssetState[int](ctx, st, "watermark"); err != nil || ok {
			return nil, fmt.Errorf("first read found a watermark (%t) or failed: %w", ok, err)
		}
		if v, err := st.Get(ctx, "watermark", 0); err != nil || v != 0 {
			return nil, fmt.Errorf("Get with default = %v, %w", v, err)
		}
		if err := st.Set(ctx, "bad", nil); err == nil {
			return nil, errors.New("nil was stored")
		}
		if err := tc.AssetState(wm).Set(ctx, "watermark", 41); err != nil {
			return nil, err
		}
		n, ok, err := GetAssetState[int](ctx, st, "watermark")
		if err != nil || !ok || n != 41 {
			return nil, fmt.Errorf("watermark = %d (%t), %w; want 41", n, ok, err)
		}
		if err := tc.AssetState(orders).Set(ctx, "k", 1); !errors.Is(err, core.ErrForbidden) ||
			!strings.Contains(err.Error(), `asset "orders"`) {
			return nil, fmt.Errorf("undeclared asset: %w, want forbidden", err)
		}
		if err := tc.AssetState(Alias("dyn")).Set(ctx, "k", 1); err == nil || !strings.Contains(err.Error(), "not alias") {
			return nil, fmt.Errorf("alias: %w", err)
		}
		return nil, st.Set(ctx, "watermark", 42)
	}, Outlets(wm))
	d.Go("two", func(ctx context.Context, tc *TaskContext) (any, error) {
		if err := tc.AssetState().Set(ctx, "k", 1); err == nil || !strings.Contains(err.Error(), "task has 2 concrete inlets and outlets") {
			return nil, fmt.Errorf("shorthand with two assets: %w", err)
		}
		if _, err := tc.AssetState(customers).Get(ctx, "k", nil); err != nil {
			return nil, err
		}
		return nil, nil
	}, Inlets(orders), Outlets(customers), DependsOn(load))
	d.Go("none", func(ctx context.Context, tc *TaskContext) (any, error) {
		if _, err := tc.AssetState().Get(ctx, "k", nil); err == nil || !strings.Contains(err.Error(), "task has 0 concrete inlets and outlets") {
			return nil, fmt.Errorf("shorthand without assets: %w", err)
		}
		return nil, nil
	})

	home := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"dags", "test", "sdk_asset_state", "--home", home}, &stdout, &stderr, []*DAG{d}); code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	st := openStore(t, home)
	rows, err := st.StateList(t.Context(), &store.StateListParams{Kind: core.StateAsset})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Scope.AssetName != "wm" || string(rows[0].Value) != "42" || rows[0].UpdatedBy.Kind != "task" ||
		rows[0].UpdatedBy.TaskID != "load" || rows[0].UpdatedBy.DagID != "sdk_asset_state" || rows[0].UpdatedBy.TryNumber != 1 {
		t.Errorf("asset state = %+v, want wm/watermark = 42 written by sdk_asset_state/load try 1", rows)
	}
}
