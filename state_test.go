package weir

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// docs/requirements.md#ts-1, #ts-2, #ts-3 from the Go SDK: try 1 checkpoints and fails, try 2
// reads the checkpoint with GetState and resumes; Get falls back to its
// default; values keep their types; NaN, nil and a bad retention are
// refused; NeverExpire and durations set the expiry.
func TestTaskStateFromGo(t *testing.T) {
	t.Parallel()
	d := NewDAG("sdk_state")
	d.Go("ingest", func(ctx context.Context, tc *TaskContext) (any, error) {
		ts := tc.TaskState()
		last, ok, err := GetState[int](ctx, tc, "last_page")
		if err != nil {
			return nil, err
		}
		if tc.TryNumber == 1 {
			if ok {
				return nil, fmt.Errorf("try 1 found a checkpoint %d", last)
			}
			if def, err := ts.Get(ctx, "last_page", "none yet"); err != nil || def != "none yet" {
				return nil, fmt.Errorf("Get of an absent key = %v, %v; want the default", def, err) //nolint:errorlint // reports the wrong error, is not caused by it
			}
			if err := ts.Set(ctx, "bad", math.NaN()); err == nil {
				return nil, errors.New("NaN was stored")
			}
			if err := ts.Set(ctx, "bad", nil); err == nil {
				return nil, errors.New("nil was stored")
			}
			if err := ts.Set(ctx, "bad", 1, -time.Hour); err == nil {
				return nil, errors.New("a negative retention was accepted")
			}
			if err := ts.Set(ctx, "job", map[string]any{"id": "j-1"}, NeverExpire); err != nil {
				return nil, err
			}
			if err := ts.Set(ctx, "scratch", []int{1}, 6*time.Hour); err != nil {
				return nil, err
			}
			if err := ts.Set(ctx, "last_page", 7); err != nil {
				return nil, err
			}
			return nil, errors.New("worker lost at 70 %")
		}
		if !ok || last != 7 {
			return nil, fmt.Errorf("try 2 read checkpoint %d (found %t), want 7", last, ok)
		}
		v, err := ts.Get(ctx, "last_page", nil)
		if n, isNum := v.(json.Number); err != nil || !isNum || n.String() != "7" {
			return nil, fmt.Errorf("Get(last_page) = %#v, %v; want json.Number 7", v, err) //nolint:errorlint // reports the wrong error, is not caused by it
		}
		if err := ts.Delete(ctx, "scratch"); err != nil {
			return nil, err
		}
		return fmt.Sprintf("resumed after page %d on try %d", last, tc.TryNumber), ts.Set(ctx, "last_page", 10)
	}, Retries(1), RetryDelay(time.Second))

	home := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"dags", "test", "sdk_state", "--home", home}, &stdout, &stderr, []*DAG{d}); code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	st := openStore(t, home)
	if v := returnValue(t, st, "sdk_state", "ingest", -1); v != `"resumed after page 7 on try 2"` {
		t.Errorf("ingest returned %s", v)
	}
	run := latestRun(t, st, "sdk_state")
	entries, err := st.StateList(t.Context(), &store.StateListParams{Kind: core.StateTask, DagID: "sdk_state", RunID: run.RunID})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]core.StateEntry{}
	for _, e := range entries {
		got[e.Key] = e
	}
	if len(got) != 2 || string(got["last_page"].Value) != "10" || got["last_page"].UpdatedBy.TryNumber != 2 ||
		string(got["job"].Value) != `{"id":"j-1"}` || !got["job"].NeverExpire || got["job"].ExpiresAt != nil {
		t.Errorf("task state = %+v, want last_page 10 (try 2) and job (never expires)", got)
	}
}
