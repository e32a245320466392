package weir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// docs/requirements.md#e-1 to #e-4 from the Go SDK: tc.Emit records events of the task's
// outlets while it runs, with partition, date and extra; a repeated
// idempotency key returns the first receipt; an undeclared asset, a date
// without a key and a TaskContext without a try are refused.
func TestEmitFromGo(t *testing.T) {
	t.Parallel()
	batches, other, exports := Asset("batches"), Asset("other"), Alias("exports")
	d := NewDAG("sdk_emit")
	d.Noop("define", Inlets(other)) // some task must define other
	date := time.Date(2026, 3, 1, 0, 0, 0, 0, time.FixedZone("CET", 3600))
	d.Go("ingest", func(ctx context.Context, tc *TaskContext) (any, error) {
		if _, err := (&TaskContext{}).Emit(ctx, batches); !errors.Is(err, ErrNoTry) {
			return nil, fmt.Errorf("emit without a try: %w, want ErrNoTry", err)
		}
		if _, err := tc.Emit(ctx, other); !errors.Is(err, core.ErrForbidden) {
			return nil, fmt.Errorf("an undeclared asset: %w, want forbidden", err)
		}
		if _, err := tc.Emit(ctx, batches, PartitionDate(date)); !errors.Is(err, core.ErrInvalid) {
			return nil, fmt.Errorf("a date without a key: %w, want invalid", err)
		}
		var ids []int64
		for range 2 {
			rec, err := tc.Emit(ctx, batches, PartitionKey("batch-1"), PartitionDate(date),
				EventExtra(map[string]any{"rows": 10}), IdempotencyKey("sdk/batch-1"))
			if err != nil {
				return nil, err
			}
			if rec.Duplicate != (len(ids) == 1) {
				return nil, fmt.Errorf("emission %d: duplicate %v", len(ids)+1, rec.Duplicate)
			}
			ids = append(ids, rec.EventID)
		}
		if ids[0] != ids[1] {
			return nil, fmt.Errorf("repeated key gave event %d, then %d", ids[0], ids[1])
		}
		_, err := tc.Emit(ctx, other, ThroughAlias(exports))
		return nil, err
	}, Outlets(batches, exports))

	home := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"dags", "test", "sdk_emit", "--home", home}, &stdout, &stderr, []*DAG{d}); code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	evs, err := openStore(t, home).AssetEventList(t.Context(), &store.AssetEventListParams{SourceTaskID: "ingest"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 || evs[0].Name != "batches" || *evs[0].PartitionKey != "batch-1" || !evs[0].PartitionDate.Equal(date) ||
		string(evs[0].Extra) != `{"rows":10}` || evs[1].Name != "other" || evs[2].Name != "batches" || evs[2].PartitionKey != nil {
		t.Errorf("events of ingest = %+v, want batch-1 of batches, other through the alias, then the success's event of batches", evs)
	}
}
