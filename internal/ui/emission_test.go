package ui_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// An asset's events say where each came from — the producing task's try,
// the API user, the watcher, the emitting callback with the try that fired
// it (a DAG-level callback's: its run, no task) — with their receipt
// (partition key and date, idempotency key); a partitioned run shows its
// partition in the grid, the runs list and its page, which lists the
// events that triggered it.
func TestEventSourcesAndPartitionedRuns(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		orders := e.assets()
		report := core.DAG{DagID: "report", Assets: []core.Asset{{Name: "orders", URI: "s3://lake/orders", Group: "sales"}}, AssetSchedule: []core.AssetRef{{Name: "orders"}}, Tasks: []core.Task{{TaskID: "sum", Operator: "noop"}}}
		err := st.WithTx(t.Context(), func(tx store.Store) error {
			if _, _, err := tx.DagSync(t.Context(), &store.DagSyncParams{Spec: report, Hash: "report", Now: e.clk.Now()}); err != nil {
				return err
			}
			return tx.AssetSync(t.Context(), &store.AssetSyncParams{Spec: &report, Now: e.clk.Now()})
		})
		if err != nil {
			t.Fatal(err)
		}
		part, day := "eu/2026-03-01", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		for _, p := range []store.AssetEventParams{
			{SourceKind: core.AssetSourceTask, SourceDagID: "shop", SourceRunID: "r7", SourceTaskID: "load", SourceMapIndex: 2, SourceTryNumber: 3},
			{SourceKind: core.AssetSourceAPI, SourceUser: "ana", IdempotencyKey: "batch-42", PartitionKey: &part, PartitionDate: &day},
			{SourceKind: core.AssetSourceWatcher, SourceWatcher: "landing"},
			// A task's on_failure callback and a DAG-level one.
			{SourceKind: core.AssetSourceCallback, SourceDagID: "shop", SourceRunID: "r7", SourceTaskID: "load", SourceMapIndex: core.NoMapIndex,
				SourceTryNumber: 2, SourceCallbackID: 41},
			{SourceKind: core.AssetSourceCallback, SourceDagID: "shop", SourceRunID: "r8", SourceMapIndex: core.NoMapIndex, SourceCallbackID: 42},
		} {
			p.AssetID, p.Now = orders.ID, e.clk.Now()
			if _, err := st.AssetEventInsert(t.Context(), &p); err != nil {
				t.Fatal(err)
			}
		}
		run, err := st.DagRunCreate(t.Context(), &store.DagRunCreateParams{DagID: "report", RunID: "asset__eu", RunType: core.RunAssetTriggered,
			State: core.RunRunning, DagVersionID: e.dag("report").LatestVersion, Now: e.clk.Now(), PartitionKey: &part,
			TaskInstances: []store.NewTaskInstance{{ID: uuid.NewString(), TaskID: "sum", MapIndex: core.NoMapIndex, MaxTries: 1, Operator: "noop"}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.AssetQueueConsume(t.Context(), "report", run.ID); err != nil {
			t.Fatal(err)
		}
		b := e.loggedIn(core.RoleViewer)

		asset := b.get(fmt.Sprintf("/assets/%d", orders.ID)).body
		for _, want := range []string{
			`task <a href="/dags/shop/runs/r7/tasks/load?map_index=2">shop.load[2]</a> in r7, try 3`,
			"API, user <code>ana</code>", "watcher <code>landing</code>",
			`callback <a href="/dags/shop/runs/r7/callbacks/41">41</a> of task <a href="/dags/shop/runs/r7/tasks/load">shop.load</a> in r7, try 2`,
			`callback <a href="/dags/shop/runs/r8/callbacks/42">42</a> of run <a href="/dags/shop/runs/r8">r8</a> of shop`,
			"<code>eu/2026-03-01</code><br><small>2026-03-01 00:00:00Z</small>", "<code>batch-42</code>",
		} {
			if !strings.Contains(asset, want) {
				t.Errorf("asset page lacks %q", want)
			}
		}
		if strings.Contains(asset, `<th scope="col">Asset</th>`) {
			t.Error("an asset's own page names the asset of each event")
		}
		grid := b.get("/dags/report").body
		if !strings.Contains(grid, `<tr class="partitions"><th scope="row">Partition</th><td><span class="pk" title="eu/2026-03-01">eu/2026-03-01</span>`) ||
			!strings.Contains(grid, `title="asset__eu · running · partition eu/2026-03-01`) {
			t.Errorf("report's grid does not show the run's partition:\n%s", grid)
		}
		if r := b.get("/dags/etl"); strings.Contains(r.body, `class="partitions"`) {
			t.Error("a grid without partitioned runs has a partition row")
		}
		if r := b.get("/dags/report/runs"); !strings.Contains(r.body, "<td><code>eu/2026-03-01</code></td>") {
			t.Errorf("runs list lacks the partition:\n%s", r.body)
		}
		page := b.get("/dags/report/runs/asset__eu")
		if page.status != http.StatusOK || !strings.Contains(page.body, "<dt>Partition</dt><dd><code>eu/2026-03-01</code></dd>") ||
			!strings.Contains(page.body, `id="events-title">Triggered by`) || !strings.Contains(page.body, "API, user <code>ana</code>") ||
			!strings.Contains(page.body, fmt.Sprintf(`<td><a href="/assets/%d">orders</a></td>`, orders.ID)) {
			t.Errorf("run page lacks its partition or the events that triggered it:\n%s", page.body)
		}
	})
}
