package weir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
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

	home := testInHome(t, d)
	evs, err := openStore(t, home).AssetEventList(t.Context(), &store.AssetEventListParams{SourceTaskID: "ingest"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 || evs[0].Name != "batches" || *evs[0].PartitionKey != "batch-1" || !evs[0].PartitionDate.Equal(date) ||
		string(evs[0].Extra) != `{"rows":10}` || evs[1].Name != "other" || evs[2].Name != "batches" || evs[2].PartitionKey != nil {
		t.Errorf("events of ingest = %+v, want batch-1 of batches, other through the alias, then the success's event of batches", evs)
	}
}

// A Go producer pushes items with tc.Stream().Push while it runs and
// closes its stream; a task with Iterate over it gets one instance per
// item, each reading its item with MapArg; a downstream task runs once.
// A push after the close and a push from a task without Streams are
// refused; Stream outside a try is ErrNoTry.
func TestStreamPushFromGo(t *testing.T) {
	t.Parallel()
	d := NewDAG("sdk_stream")
	prod := d.Go("produce", func(ctx context.Context, tc *TaskContext) (any, error) {
		if err := (&TaskContext{}).Stream().Push(ctx, 1); !errors.Is(err, ErrNoTry) {
			return nil, fmt.Errorf("push without a try: %w, want ErrNoTry", err)
		}
		s := tc.Stream()
		for i := range 5 {
			// Pushes through s and through another call's Stream, in
			// turn, all append: one count of the stream's end (two
			// handles once lost an item).
			h := s
			if i%2 == 1 {
				h = tc.Stream()
			}
			if err := h.Push(ctx, map[string]int{"n": i * 10}); err != nil {
				return nil, err
			}
		}
		// PushAt skips an index the stream holds, appends at its end and
		// refuses one past it.
		if err := s.PushAt(ctx, 2, map[string]int{"n": -1}); err != nil {
			return nil, fmt.Errorf("push again at index 2: %w", err)
		}
		if err := s.PushAt(ctx, 5, map[string]int{"n": 50}); err != nil {
			return nil, err
		}
		if err := s.PushAt(ctx, 9, 1); !errors.Is(err, ErrConflict) {
			return nil, fmt.Errorf("push past the end: %w, want ErrConflict", err)
		}
		if n, err := s.Next(ctx); err != nil || n != 6 {
			return nil, fmt.Errorf("next after 6 pushes = %d, %w", n, err)
		}
		if err := s.Close(ctx); err != nil {
			return nil, err
		}
		if err := s.Push(ctx, 99); !errors.Is(err, ErrConflict) {
			return nil, fmt.Errorf("push after close: %w, want conflict", err)
		}
		return nil, nil
	}, Streams())
	use := d.Go("use", func(_ context.Context, tc *TaskContext) (any, error) {
		item, err := MapArg[struct{ N int }](tc, "item")
		if err != nil {
			return nil, err
		}
		if item.N != tc.MapIndex*10 {
			return nil, fmt.Errorf("instance %d got item %d", tc.MapIndex, item.N)
		}
		return item.N, nil
	}, Iterate(prod))
	d.Go("report", func(ctx context.Context, tc *TaskContext) (any, error) {
		if err := tc.Stream().Push(ctx, 1); !errors.Is(err, ErrInvalid) {
			return nil, fmt.Errorf("push from a task without Streams: %w, want invalid", err)
		}
		return "done", nil
	}, DependsOn(use))

	home := testInHome(t, d)
	tis, err := openStore(t, home).TaskInstanceList(t.Context(), &store.TaskInstanceListParams{DagID: "sdk_stream"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ti := range tis {
		got = append(got, fmt.Sprintf("%s[%d]=%s/%d", ti.TaskID, ti.MapIndex, ti.State, ti.TryNumber))
	}
	want := "produce[-1]=success/1 report[-1]=success/1 use[0]=success/1 use[1]=success/1 use[2]=success/1 use[3]=success/1 use[4]=success/1 use[5]=success/1"
	if strings.Join(got, " ") != want {
		t.Fatalf("instances = %v, want %s", got, want)
	}
}

// A producer whose retry starts over and pushes every item again with
// PushAt adds none twice: its iterating task has one instance per item.
func TestStreamPushAtAcrossARetry(t *testing.T) {
	t.Parallel()
	d := NewDAG("sdk_stream_retry")
	prod := d.Go("produce", func(ctx context.Context, tc *TaskContext) (any, error) {
		s := tc.Stream()
		for i := range 4 {
			if tc.TryNumber == 1 && i == 2 {
				return nil, errors.New("the source went away")
			}
			if err := s.PushAt(ctx, int64(i), i); err != nil {
				return nil, err
			}
		}
		return nil, s.Close(ctx)
	}, Streams(), Retries(1), RetryDelay(0))
	use := d.Go("use", func(_ context.Context, tc *TaskContext) (any, error) {
		item, err := MapArg[int](tc, "item")
		if err == nil && item != tc.MapIndex {
			err = fmt.Errorf("instance %d got item %d", tc.MapIndex, item)
		}
		return item, err
	}, Iterate(prod))
	// The iterating task's values are one list, as a mapped task's
	// (Airflow's xcom_pull(task_ids=...)): to Go, to templates and to an
	// expansion.
	sum := d.Go("sum", func(ctx context.Context, tc *TaskContext) (any, error) {
		items, err := XComPullAll[[]int](ctx, tc, "use")
		if err != nil || !slices.Equal(items, []int{0, 1, 2, 3}) {
			return nil, fmt.Errorf("the values of use = %v, %w; want [0 1 2 3]", items, err)
		}
		return len(items), nil
	}, DependsOn(use))
	d.Bash("echo", "test '{{ ti.xcom_pull(task_ids=\"use\") | join(\",\") }}' = 0,1,2,3", DependsOn(sum))
	d.Go("again", func(_ context.Context, tc *TaskContext) (any, error) {
		return MapArg[int](tc, "v")
	}, ExpandXCom("v", use), DependsOn(sum))
	home := testInHome(t, d)
	tis, err := openStore(t, home).TaskInstanceList(t.Context(), &store.TaskInstanceListParams{DagID: "sdk_stream_retry"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ti := range tis {
		got = append(got, fmt.Sprintf("%s[%d]=%s/%d", ti.TaskID, ti.MapIndex, ti.State, ti.TryNumber))
	}
	if want := "again[0]=success/1 again[1]=success/1 again[2]=success/1 again[3]=success/1 echo[-1]=success/1 " +
		"produce[-1]=success/2 sum[-1]=success/1 use[0]=success/1 use[1]=success/1 use[2]=success/1 use[3]=success/1"; strings.Join(got, " ") != want {
		t.Fatalf("instances = %v, want %s", got, want)
	}
}

// testInHome runs `weir dags test` of d in a fresh home, which it returns,
// and fails the test unless it exits 0.
func testInHome(t *testing.T, d *DAG) string {
	t.Helper()
	home := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"dags", "test", d.ID(), "--home", home}, &stdout, &stderr, []*DAG{d}); code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	return home
}
