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
			if err := s.Push(ctx, map[string]int{"n": i * 10}); err != nil {
				return nil, err
			}
		}
		if n, err := s.Next(ctx); err != nil || n != 5 {
			return nil, fmt.Errorf("next after 5 pushes = %d, %w", n, err)
		}
		if err := s.Close(ctx); err != nil {
			return nil, err
		}
		if err := s.Push(ctx, 99); !errors.Is(err, core.ErrConflict) {
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
		if err := tc.Stream().Push(ctx, 1); !errors.Is(err, core.ErrInvalid) {
			return nil, fmt.Errorf("push from a task without Streams: %w, want invalid", err)
		}
		return "done", nil
	}, DependsOn(use))

	home := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"dags", "test", "sdk_stream", "--home", home}, &stdout, &stderr, []*DAG{d}); code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	tis, err := openStore(t, home).TaskInstanceList(t.Context(), &store.TaskInstanceListParams{DagID: "sdk_stream"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ti := range tis {
		got = append(got, fmt.Sprintf("%s[%d]=%s/%d", ti.TaskID, ti.MapIndex, ti.State, ti.TryNumber))
	}
	want := "produce[-1]=success/1 report[-1]=success/1 use[0]=success/1 use[1]=success/1 use[2]=success/1 use[3]=success/1 use[4]=success/1"
	if strings.Join(got, " ") != want {
		t.Fatalf("instances = %v, want %s", got, want)
	}
}
