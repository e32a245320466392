package service_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// Clearing a task instance for a re-run deletes its task state
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

	if err := clearTasks(ctx, st, clk, run, true, "b"); err != nil {
		t.Fatal(err)
	}
	if !has("b") || !has("a") {
		t.Fatalf("keep_task_state: state of b kept = %t (want true), a untouched = %t", has("b"), has("a"))
	}
	if err := clearTasks(ctx, st, clk, run, false, "a"); err != nil {
		t.Fatal(err)
	}
	if has("a") || !has("b") {
		t.Errorf("clear of a: a's state left = %t (want false), b's kept = %t (want true)", has("a"), has("b"))
	}

	// A whole-run clear (a fresh failed run: cleared instances are skipped).
	st, clk, run = failedChainRun(t)
	set("a")
	set("b")
	if _, err := newSvc(st, clk).Clear(ctx, core.System, service.ClearParams{DagID: "chain", RunID: run.RunID}); err != nil {
		t.Fatal(err)
	}
	if has("a") || has("b") {
		t.Errorf("clear of the run left task state: a %t, b %t", has("a"), has("b"))
	}
}
