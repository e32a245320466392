package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/weirflow/weir"
)

// warehouseEvents is the asset the watermark load updates; its state holds
// the watermark (docs/asset-state.md).
var warehouseEvents = weir.Asset("go_warehouse_events", weir.AssetURI("file:///tmp/weir-example/go_warehouse_events.csv"))

// watermarkDAG is the asset watermark pattern in Go, like
// examples/dags/watermark_load.yaml: append_source adds params.new_rows rows
// to the source CSV (id,amount), and load processes only the rows whose id
// is above the watermark kept in warehouse_events' asset state, then
// advances it. Its return value is the ids it processed.
func watermarkDAG() *weir.DAG {
	dag := weir.NewDAG("go_watermark_load",
		weir.Description("Incremental load: each run processes only the rows added since the last watermark."),
		weir.Tags("example", "go", "asset-state"),
		weir.Params(map[string]any{"source": "/tmp/weir-example/go_events.csv", "new_rows": 3}),
	)
	appendSource := dag.Go("append_source", func(_ context.Context, tc *weir.TaskContext) (any, error) {
		source, err := weir.ParamAs[string](tc, "source")
		if err != nil {
			return nil, err
		}
		n, err := weir.ParamAs[int](tc, "new_rows")
		if err != nil {
			return nil, err
		}
		rows, err := readRows(source)
		if err != nil {
			return nil, err
		}
		return len(rows) + n, appendRows(source, len(rows)+1, n)
	})
	dag.Go("load", func(ctx context.Context, tc *weir.TaskContext) (any, error) {
		source, err := weir.ParamAs[string](tc, "source")
		if err != nil {
			return nil, err
		}
		// The task declares one asset, so tc.AssetState() would do too.
		st := tc.AssetState(warehouseEvents)
		since, _, err := weir.GetAssetState[int](ctx, st, "watermark")
		if err != nil {
			return nil, err
		}
		rows, err := readRows(source)
		if err != nil {
			return nil, err
		}
		processed := []int{}
		for _, id := range rows {
			if id > since {
				processed = append(processed, id)
			}
		}
		tc.Logger.Info("incremental load", "watermark", since, "new_rows", len(processed))
		if len(processed) > 0 {
			if err := st.Set(ctx, "watermark", processed[len(processed)-1]); err != nil {
				return nil, err
			}
		}
		return processed, nil
	}, weir.Outlets(warehouseEvents), weir.DependsOn(appendSource))
	return dag
}

// readRows returns the ids of the source CSV's rows (none when it does not
// exist yet).
func readRows(path string) ([]int, error) {
	f, err := os.Open(path) //nolint:gosec // the path is the DAG's own param
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var ids []int
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if line == 1 {
			continue // header
		}
		id, err := strconv.Atoi(strings.SplitN(sc.Text(), ",", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("%s line %d: id is not a number: %w", path, line, err)
		}
		ids = append(ids, id)
	}
	return ids, sc.Err()
}

// appendRows appends n rows starting at id first, creating the file with
// its header when needed.
func appendRows(path string, first, n int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600) //nolint:gosec // the DAG's own param
	if err != nil {
		return err
	}
	if fi, err := f.Stat(); err == nil && fi.Size() == 0 {
		_, _ = fmt.Fprintln(f, "id,amount")
	}
	for id := first; id < first+n; id++ {
		if _, err := fmt.Fprintf(f, "%d,%d\n", id, id*10); err != nil {
			_ = f.Close()
			return err
		}
	}
	return f.Close()
}
