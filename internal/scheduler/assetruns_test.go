package scheduler_test

import (
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// syncAssets records the assets of the harness's DAGs, as the DAG processor does.
func (h *harness) syncAssets() {
	h.t.Helper()
	for _, spec := range h.specs {
		if err := h.st.AssetSync(h.ctx, &store.AssetSyncParams{Spec: spec, Now: h.clk.Now()}); err != nil {
			h.t.Fatal(err)
		}
	}
}

func (h *harness) assetEvent(name string) {
	h.t.Helper()
	if _, err := h.st.AssetEventInsert(h.ctx, &store.AssetEventParams{AssetName: name, SourceKind: core.AssetSourceAPI,
		Now: h.clk.Now()}); err != nil {
		h.t.Fatal(err)
	}
	h.clk.Advance(time.Second)
}

// assetRuns returns the DAG's runs, oldest first, with the events each consumed.
func (h *harness) assetRuns(dagID string) ([]core.DagRun, [][]core.AssetEvent) {
	h.t.Helper()
	list, err := h.st.DagRunList(h.ctx, &store.DagRunListParams{DagID: dagID})
	if err != nil {
		h.t.Fatal(err)
	}
	var evs [][]core.AssetEvent
	for i := len(list) - 1; i >= 0; i-- {
		e, err := h.st.AssetEventsOfRun(h.ctx, list[i].ID)
		if err != nil {
			h.t.Fatal(err)
		}
		evs = append(evs, e)
	}
	for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
		list[i], list[j] = list[j], list[i]
	}
	return list, evs
}

// TestAssetTriggeredRuns: a DAG scheduled on [a, b] runs once both have new
// events, consuming them; not before, not twice, not while paused.
func TestAssetTriggeredRuns(t *testing.T) {
	t.Parallel()
	a, b := core.Asset{Name: "a", URI: "s3://x/a"}, core.Asset{Name: "b", URI: "s3://x/b"}
	cons := core.DAG{DagID: "cons", Assets: []core.Asset{a, b},
		AssetSchedule: []core.AssetRef{{Name: "a"}, {URI: "s3://x/b"}},
		Tasks:         []core.Task{{TaskID: "t", Operator: "noop"}}}
	h := newHarness(t, cons)
	h.syncAssets()

	h.assetEvent("a")
	h.assetEvent("a")
	h.step()
	if list, _ := h.assetRuns("cons"); len(list) != 0 {
		t.Fatalf("runs after events of a only: %d, want 0 (b has none)", len(list))
	}
	h.assetEvent("b")
	h.step()
	h.step()
	list, evs := h.assetRuns("cons")
	if len(list) != 1 {
		t.Fatalf("runs after a and b: %d, want 1", len(list))
	}
	if list[0].RunType != core.RunAssetTriggered || !strings.HasPrefix(list[0].RunID, "asset_triggered__") {
		t.Errorf("run = %s %s, want an asset_triggered run", list[0].RunType, list[0].RunID)
	}
	if len(evs[0]) != 3 {
		t.Errorf("the run consumed %d events, want all 3 (a twice, b once)", len(evs[0]))
	}

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(h.st.DagSetPaused(h.ctx, "cons", true))
	h.assetEvent("b")
	h.assetEvent("a")
	h.step()
	if list, _ := h.assetRuns("cons"); len(list) != 1 {
		t.Fatalf("runs while paused: %d, want still 1", len(list))
	}
	must(h.st.DagSetPaused(h.ctx, "cons", false))
	h.step()
	list, evs = h.assetRuns("cons")
	if len(list) != 2 || len(evs[1]) != 2 {
		t.Fatalf("after unpausing: %d runs (second consumed %v), want a second run with the 2 events queued while paused",
			len(list), evs)
	}
}
