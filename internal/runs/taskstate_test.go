package runs_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
)

// SPEC TS-5: clearing a task instance for a re-run deletes its task state
// in the clear's transaction, unless the caller asks to keep it; other
// instances' state is untouched.
func TestClearDeletesTaskStateUnlessKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, clk, run := failedChainRun(t)
	scope := func(task string) core.StateScope { return core.TaskScope("chain", run.RunID, task, -1) }
	set := func(task string) {
		t.Helper()
		if err := st.StateSet(ctx, &store.StateSetParams{Scope: scope(task), Key: "checkpoint",
			Value: json.RawMessage(`7`), Now: t0, By: core.UserWriter("")}); err != nil {
			t.Fatal(err)
		}
	}
	has := func(task string) bool {
		t.Helper()
		_, err := st.StateGet(ctx, scope(task), "checkpoint")
		return err == nil
	}
	set("a")
	set("b")
	tis := listTIs(t, st, run.ID)

	if err := runs.ClearTaskInstances(ctx, st, clk, []string{tis["b"].ID}, runs.KeepTaskState(true)); err != nil {
		t.Fatal(err)
	}
	if !has("b") || !has("a") {
		t.Fatalf("keep_task_state: state of b kept = %t (want true), a untouched = %t", has("b"), has("a"))
	}
	if err := runs.ClearTaskInstances(ctx, st, clk, []string{tis["a"].ID}); err != nil {
		t.Fatal(err)
	}
	if has("a") || !has("b") {
		t.Errorf("clear of a: a's state left = %t (want false), b's kept = %t (want true)", has("a"), has("b"))
	}

	// A whole-run clear (a fresh failed run: cleared instances are skipped).
	st, clk, run = failedChainRun(t)
	set("a")
	set("b")
	if err := runs.ClearDagRun(ctx, st, clk, "chain", run.RunID, false); err != nil {
		t.Fatal(err)
	}
	if has("a") || has("b") {
		t.Errorf("clear of the run left task state: a %t, b %t", has("a"), has("b"))
	}
}
