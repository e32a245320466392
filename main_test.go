package weir

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlite"
)

func TestRunRejectsInvalidDAGsBeforeRunning(t *testing.T) {
	t.Parallel()
	good := func(id string) *DAG { d := NewDAG(id); d.Noop("a"); return d }
	bad := NewDAG("bad")
	a := bad.Noop("a")
	bad.Noop("b", DependsOn(a), TriggerRule("sometimes"))
	cases := []struct {
		name string
		dags []*DAG
		want []string
		opts []Option
	}{
		{"invalid dag", []*DAG{good("fine"), bad}, []string{
			`dag "bad": tasks.b.trigger_rule: unknown trigger rule "sometimes"`}, nil},
		{"duplicate dag id", []*DAG{good("twice"), good("twice")}, []string{
			`dag "twice": dag_id: defined twice in weir.Main`}, nil},
		{"nil dag", []*DAG{nil}, []string{"weir.Main argument 0 is a nil DAG"}, nil},
		{"bad state backends", []*DAG{good("fine")}, []string{
			`weir.WithStateBackend: state backend name "metastore" is the built-in default`,
			`weir.WithStateBackend: state backend name "a b": want a letter`,
			`weir.WithStateBackend("empty"): the backend is nil`,
			`weir.WithStateBackend("twice"): registered twice`,
		}, []Option{WithStateBackend("metastore", nopBackend{}), WithStateBackend("a b", nopBackend{}),
			WithStateBackend("empty", nil), WithStateBackend("twice", nopBackend{}), WithStateBackend("twice", nopBackend{})}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			home := t.TempDir()
			code := run(t.Context(), []string{"db", "migrate", "--home", home}, &stdout, &stderr, c.dags, c.opts...)
			if code != ExitInvalid {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, ExitInvalid, stderr.String())
			}
			for _, w := range c.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr.String())
				}
			}
			if matches, _ := filepath.Glob(filepath.Join(home, "*")); len(matches) > 0 {
				t.Errorf("the command ran despite invalid DAGs: %s holds %v", home, matches)
			}
		})
	}
}

// nopBackend is a StateBackend that keeps nothing.
type nopBackend struct{}

func (nopBackend) Serialize(context.Context, string, []byte) error { return nil }
func (nopBackend) Deserialize(context.Context, string) ([]byte, error) {
	return nil, ErrNotFound
}
func (nopBackend) Cleanup(context.Context, string) error { return nil }

// TestGoTasksRunInTheEngine runs a DAG of Go tasks in-process (`dags test`
// on real SQLite, api-server, scheduler and worker) and checks what the
// TaskContext helpers saw and how errors, panics and ErrSkip end tries.
func TestGoTasksRunInTheEngine(t *testing.T) {
	t.Parallel()
	d := NewDAG("sdk_ctx", Params(map[string]any{"factor": 10}))
	produce := d.Go("produce", func(ctx context.Context, tc *TaskContext) (any, error) {
		if err := tc.XComPush(ctx, "extra", map[string]int{"a": 1}); err != nil {
			return nil, err
		}
		return []string{"x", "y"}, nil
	})
	consume := d.Go("consume", func(_ context.Context, tc *TaskContext) (any, error) {
		item, err := MapArg[string](tc, "item")
		if err != nil {
			return nil, err
		}
		n, err := MapArg[int](tc, "n")
		if err != nil {
			return nil, err
		}
		f, err := ParamAs[int](tc, "factor")
		if err != nil {
			return nil, err
		}
		return fmt.Sprintf("%s%d@%d", item, n*f, tc.MapIndex), nil
	}, ExpandXCom("item", produce), Expand("n", 1, 2))
	d.Go("check", func(ctx context.Context, tc *TaskContext) (any, error) {
		extra, err := XComPullKey[map[string]int](ctx, tc, "produce", "extra")
		if err != nil {
			return nil, err
		}
		var parts []string
		for i := range 4 {
			s, err := XComPullMapped[string](ctx, tc, "consume", "", i)
			if err != nil {
				return nil, err
			}
			parts = append(parts, s)
		}
		if _, err := XComPullMapped[string](ctx, tc, "consume", "", 4); !errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("pull of a missing map index: got %v, want ErrNotFound", err) //nolint:errorlint // reports the wrong error, is not caused by it
		}
		dag, err := OpKwarg[string](tc, "dag")
		if err != nil {
			return nil, err
		}
		return fmt.Sprintf("%s a=%d %s try=%d", dag, extra["a"], strings.Join(parts, ","), tc.TryNumber), nil
	}, DependsOn(consume), OpKwargs(map[string]any{"dag": "{{ .dag_id }}"}))
	d.Go("skipper", func(context.Context, *TaskContext) (any, error) {
		return nil, fmt.Errorf("nothing to do: %w", ErrSkip)
	})
	boom := d.Go("boom", func(context.Context, *TaskContext) (any, error) { panic("kaboom") })
	fatal := d.Go("fatal", func(context.Context, *TaskContext) (any, error) {
		return nil, fmt.Errorf("bad input: %w", NoRetry(errors.New("no retry mends it")))
	}, Retries(3), RetryDelay(0))
	d.Noop("after", TriggerRule(AllDone), DependsOn(boom, fatal))
	d.Go("none", nop, Expand("x")) // an empty list skips the task

	home := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"dags", "test", "sdk_ctx", "--home", home}, &stdout, &stderr, []*DAG{d})
	// As in Airflow, the leaves decide the run: boom failed, but its
	// all_done downstream (a leaf) succeeded.
	if code != 0 {
		t.Fatalf("exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	st := openStore(t, home)
	got := taskStates(t, st, "sdk_ctx")
	want := map[string]string{"produce": "success", "consume[0]": "success", "consume[1]": "success",
		"consume[2]": "success", "consume[3]": "success", "check": "success", "skipper": "skipped",
		"boom": "failed", "fatal": "failed", "after": "success", "none": "skipped"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: state %q, want %q (all: %v)", k, got[k], w, got)
		}
	}
	if v := returnValue(t, st, "sdk_ctx", "check", -1); v != `"sdk_ctx a=1 x10@0,x20@1,y10@2,y20@3 try=1"` {
		t.Errorf("check returned %s", v)
	}
	tis, err := st.TaskInstanceList(t.Context(), &store.TaskInstanceListParams{DagRunID: latestRun(t, st, "sdk_ctx").ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range tis {
		if ti.TaskID == "fatal" && ti.TryNumber != 1 {
			t.Errorf("fatal (NoRetry, retries 3) took %d tries, want 1", ti.TryNumber)
		}
	}
}

func openStore(t *testing.T, home string) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(home, "weir.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// latestRun returns the newest run of dagID.
func latestRun(t *testing.T, st store.Store, dagID string) core.DagRun {
	t.Helper()
	rs, err := st.DagRunList(t.Context(), &store.DagRunListParams{DagID: dagID, Page: store.Page{Limit: 1}})
	if err != nil || len(rs) == 0 {
		t.Fatalf("no run of %s: %v", dagID, err)
	}
	return rs[0]
}

// taskStates maps "task" (or "task[map_index]") to the state of the newest
// run's task instances.
func taskStates(t *testing.T, st store.Store, dagID string) map[string]string {
	t.Helper()
	run := latestRun(t, st, dagID)
	tis, err := st.TaskInstanceList(t.Context(), &store.TaskInstanceListParams{DagRunID: run.ID})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, ti := range tis {
		k := ti.TaskID
		if ti.MapIndex >= 0 {
			k = fmt.Sprintf("%s[%d]", k, ti.MapIndex)
		}
		out[k] = ti.State.String()
	}
	return out
}

// returnValue returns the JSON return value of a task of dagID's newest run.
func returnValue(t *testing.T, st store.Store, dagID, taskID string, mapIndex int) string {
	t.Helper()
	run := latestRun(t, st, dagID)
	x, err := st.XComGet(t.Context(), dagID, run.RunID, taskID, mapIndex, core.DefaultXComKey)
	if err != nil {
		t.Fatalf("return value of %s: %v", taskID, err)
	}
	return string(x.Value)
}
