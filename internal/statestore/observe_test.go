package statestore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/statevalue"
)

// An observed Service reports each backend operation with its scope's
// kind and its outcome (the metrics' weir_state_store_operations_total);
// a key refused before the backend is no operation.
func TestObserveReportsEachOperation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, _, _ := newService(t, statestore.Config{})
	var got []string
	svc.Observe(func(op string, kind core.StateKind, took time.Duration, err error) {
		outcome := "ok"
		if errors.Is(err, core.ErrNotFound) {
			outcome = "not_found"
		} else if err != nil {
			outcome = err.Error()
		}
		if took < 0 {
			outcome += " (negative duration)"
		}
		got = append(got, fmt.Sprintf("%s %s %s", op, kind, outcome))
	})
	by := core.StateWriter{Kind: core.StateWriterTask, DagID: "d", RunID: "r1", TaskID: "t", MapIndex: -1, TryNumber: 1}
	if _, err := svc.Set(ctx, sc, "cursor", []byte(`42`), statevalue.Retention{}, by); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, sc, "cursor"); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, sc, "cursor"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, sc, "cursor"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("get of a deleted key: %v, want not found", err)
	}
	if err := svc.Clear(ctx, sc, false); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, sc, ""); err == nil {
		t.Fatal("an empty key was accepted")
	}
	want := []string{"set task ok", "get task ok", "delete task ok", "get task not_found", "clear task ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("operations observed (-want +got):\n%s", diff)
	}
}
