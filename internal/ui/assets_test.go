package ui_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// assets records a DAG producing "orders" and "customers", as the DAG
// processor would, and returns the orders asset.
func (e *env) assets() *core.AssetModel {
	e.t.Helper()
	spec := core.DAG{DagID: "shop", Assets: []core.Asset{{Name: "orders", URI: "s3://lake/orders", Group: "sales"},
		{Name: "customers", URI: "s3://lake/customers"}},
		Tasks: []core.Task{{TaskID: "load", Operator: "noop", Outlets: []core.AssetRef{{Name: "orders"}, {Name: "customers"}}}}}
	err := e.st.WithTx(e.t.Context(), func(tx store.Store) error {
		if _, _, err := tx.DagSync(e.t.Context(), &store.DagSyncParams{Spec: spec, Hash: "shop", Now: e.clk.Now()}); err != nil {
			return err
		}
		return tx.AssetSync(e.t.Context(), &store.AssetSyncParams{Spec: &spec, Now: e.clk.Now()})
	})
	if err != nil {
		e.t.Fatal(err)
	}
	a, err := e.st.AssetGetByName(e.t.Context(), "orders")
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// The assets list shows each asset's last event; an asset's page lists its
// events newest first with source, partition and extra, and its state
// panel, whose edits are audited as asset state.
func TestAssetsPages(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		orders := e.assets()
		part := "2026-03-01"
		for i := range 3 {
			p := &store.AssetEventParams{AssetID: orders.ID, SourceKind: core.AssetSourceAPI, Now: e.clk.Now().Add(time.Duration(i) * time.Minute),
				Extra: json.RawMessage(fmt.Sprintf(`{"rows": %d}`, 10+i))}
			if i == 2 {
				p.PartitionKey = &part
			}
			if _, err := st.AssetEventInsert(t.Context(), p); err != nil {
				t.Fatal(err)
			}
		}
		e.clk.Advance(time.Hour)
		op := e.loggedIn(core.RoleOp)

		list := op.get("/assets")
		if list.status != http.StatusOK || !strings.Contains(list.body, fmt.Sprintf(`<a href="/assets/%d">orders</a>`, orders.ID)) ||
			!strings.Contains(list.body, ">58 min ago</time>") || !strings.Contains(list.body, `<span class="muted">none</span>`) {
			t.Fatalf("assets list: %d; want orders with its last event 58 min ago and customers with none:\n%s", list.status, list.body)
		}
		if r := op.get("/assets?q=cust"); strings.Contains(r.body, ">orders</a>") || !strings.Contains(r.body, ">customers</a>") {
			t.Error("?q=cust does not filter by name")
		}

		page := fmt.Sprintf("/assets/%d", orders.ID)
		body := op.get(page).body
		i12, i10 := strings.Index(body, "&#34;rows&#34;: 12"), strings.Index(body, "&#34;rows&#34;: 10")
		if i12 < 0 || i10 < 0 || i12 > i10 || !strings.Contains(body, "<code>2026-03-01</code>") || !strings.Contains(body, "shop</a>.load") {
			t.Errorf("asset page: want events newest first with partition and extra, and the producer:\n%s", body)
		}

		if !strings.Contains(body, "No watchers.") {
			t.Errorf("asset page without watchers: want \"No watchers.\"")
		}

		csrf := csrfOf(t, body)
		if r := op.post(page+"/state/set", url.Values{"csrf": {csrf}, "back": {page}, "key": {"watermark"}, "value": {`"2026-03-01"`}}); r.status != http.StatusSeeOther {
			t.Fatalf("set asset state: %d\n%s", r.status, r.body)
		}
		if r := op.post(page+"/state/set", url.Values{"csrf": {csrf}, "key": {"x"}, "value": {"1"}, "retention": {"7d"}}); r.status != http.StatusBadRequest {
			t.Errorf("asset state with a retention: %d, want 400 (asset state has none)", r.status)
		}
		body = op.get(page).body
		if !strings.Contains(body, "<code>watermark</code>") || !strings.Contains(body, "&#34;2026-03-01&#34;") || strings.Contains(body, ">Expires<") {
			t.Errorf("asset state panel: want the key and value and no expiry column:\n%s", body)
		}
		if !strings.Contains(body, "Clear all asset state (watcher cursors kept)") {
			t.Errorf("asset state panel: its clear button does not say the watcher cursors are kept")
		}
		if r := op.post(page+"/state/delete", url.Values{"csrf": {csrf}, "key": {"watermark"}}); r.status != http.StatusSeeOther {
			t.Fatalf("delete asset state: %d", r.status)
		}
		audit, _ := st.AuditLogList(t.Context(), &store.AuditLogListParams{User: "op"})
		var actions []string
		for _, a := range audit {
			actions = append(actions, a.Action)
		}
		if got := strings.Join(actions, " "); !strings.Contains(got, "asset_state.set") || !strings.Contains(got, "asset_state.delete") {
			t.Errorf("audit actions = %s; want asset_state.set and asset_state.delete", got)
		}
		for path, status := range map[string]int{"/assets/999999": http.StatusNotFound, "/assets/x": http.StatusBadRequest, "/assets?status=gone": http.StatusBadRequest} {
			if r := op.get(path); r.status != status {
				t.Errorf("GET %s: %d, want %d", path, r.status, status)
			}
		}
	})
}

// TestAssetWatchersPanel: an asset page shows its watchers' health and
// cursor; an op resets a cursor (an audited asset-state edit), a viewer
// sees no reset button and is refused if it posts anyway.
func TestAssetWatchersPanel(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		spec := core.DAG{DagID: "watched", Assets: []core.Asset{{Name: "landing", URI: "file:///in", Watchers: []core.AssetWatcher{
			{Name: "files", Trigger: core.TriggerSpec{Type: "directory", Kwargs: json.RawMessage(`{"path":"/in"}`)}}}}},
			Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}}
		if err := st.WithTx(t.Context(), func(tx store.Store) error {
			if _, _, err := tx.DagSync(t.Context(), &store.DagSyncParams{Spec: spec, Hash: "w", Now: e.clk.Now()}); err != nil {
				return err
			}
			return tx.AssetSync(t.Context(), &store.AssetSyncParams{Spec: &spec, Now: e.clk.Now()})
		}); err != nil {
			t.Fatal(err)
		}
		a, _ := st.AssetGetByName(t.Context(), "landing")
		ws, _ := st.WatcherList(t.Context(), &store.WatcherListParams{AssetID: a.ID})
		if err := st.WatcherReportPolls(t.Context(), []store.WatcherPoll{{TriggerID: ws[0].TriggerID, At: e.clk.Now(),
			Duration: 12 * time.Millisecond, Err: "open /in: no such file or directory", ErrorsInRow: 3}}); err != nil {
			t.Fatal(err)
		}
		if err := st.StateSet(t.Context(), &store.StateSetParams{Scope: core.AssetScope(a.ID), Key: core.WatcherCursorKey("files"),
			Value: json.RawMessage(`{"key":"a.csv"}`), Now: e.clk.Now(), By: core.WatcherWriter("files")}); err != nil {
			t.Fatal(err)
		}
		page := fmt.Sprintf("/assets/%d", a.ID)
		op := e.loggedIn(core.RoleOp)
		body := op.get(page).body
		for _, want := range []string{"<th scope=\"row\">files</th>", "<code>directory</code>", "(12 ms)", "⚠ 3 in a row",
			"no such file or directory", "a.csv", "Reset cursor"} {
			if !strings.Contains(body, want) {
				t.Errorf("asset page lacks %q:\n%s", want, body)
			}
		}
		viewer := e.loggedIn(core.RoleViewer)
		vbody := viewer.get(page).body
		reset := page + "/watchers/files/reset"
		if strings.Contains(vbody, "Reset cursor") {
			t.Error("a viewer sees the reset button")
		}
		if r := viewer.post(reset, url.Values{"csrf": {csrfOf(t, vbody)}}); r.status != http.StatusForbidden {
			t.Errorf("a viewer's reset: %d, want 403", r.status)
		}
		if r := op.post(reset, url.Values{"csrf": {csrfOf(t, body)}}); r.status != http.StatusSeeOther {
			t.Fatalf("reset: %d\n%s", r.status, r.body)
		}
		if _, err := st.StateGet(t.Context(), core.AssetScope(a.ID), core.WatcherCursorKey("files")); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("cursor after reset: %v, want deleted", err)
		}
	})
}

// The Materialize button of an asset with one producing DAG runs that DAG
// and shows the new run; a viewer sees no button and may not post it.
func TestMaterializeButton(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		orders := e.assets() // produced by shop.load
		page := fmt.Sprintf("/assets/%d", orders.ID)
		op := e.loggedIn(core.RoleOp)
		body := op.get(page).body
		if !strings.Contains(body, ">Materialize</button>") || !strings.Contains(body, "Trigger a run of shop") {
			t.Fatalf("asset page lacks the Materialize button of shop:\n%s", body)
		}
		viewer := e.loggedIn(core.RoleViewer)
		vbody := viewer.get(page).body
		if strings.Contains(vbody, ">Materialize</button>") {
			t.Error("a viewer sees the Materialize button")
		}
		if r := viewer.post(page+"/materialize", url.Values{"csrf": {csrfOf(t, vbody)}}); r.status != http.StatusForbidden {
			t.Errorf("a viewer's materialize: %d, want 403", r.status)
		}
		r := op.post(page+"/materialize", url.Values{"csrf": {csrfOf(t, body)}})
		runs, err := st.DagRunList(t.Context(), &store.DagRunListParams{DagID: "shop"})
		if err != nil || len(runs) != 1 || runs[0].RunType != core.RunManual {
			t.Fatalf("runs of shop after materialize: %+v, %v", runs, err)
		}
		if want := "/dags/shop/runs/" + url.PathEscape(runs[0].RunID); r.status != http.StatusSeeOther || r.header.Get("Location") != want {
			t.Errorf("materialize: %d to %q, want 303 to %s", r.status, r.header.Get("Location"), want)
		}
	})
}

// The asset graph draws the producing DAG, its assets and the DAG an
// asset schedules, linked to their pages; the name filter narrows it and a
// bad status is refused.
func TestAssetGraphPage(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		orders := e.assets()
		cons := core.DAG{DagID: "report", Assets: []core.Asset{{Name: "orders", URI: "s3://lake/orders", Group: "sales"}}, AssetSchedule: []core.AssetRef{{Name: "orders"}}, Tasks: []core.Task{{TaskID: "r", Operator: "noop"}}}
		if err := st.WithTx(t.Context(), func(tx store.Store) error {
			if _, _, err := tx.DagSync(t.Context(), &store.DagSyncParams{Spec: cons, Hash: "report", Now: e.clk.Now()}); err != nil {
				return err
			}
			return tx.AssetSync(t.Context(), &store.AssetSyncParams{Spec: &cons, Now: e.clk.Now()})
		}); err != nil {
			t.Fatal(err)
		}
		b := e.loggedIn(core.RoleViewer)
		g := b.get("/assets/graph")
		if g.status != http.StatusOK || strings.Count(g.body, `class="node k-asset"`) != 2 || strings.Count(g.body, `class="node k-dag"`) != 2 ||
			!strings.Contains(g.body, `class="edge e-schedules"`) || strings.Count(g.body, `class="edge e-produces"`) != 2 ||
			!strings.Contains(g.body, fmt.Sprintf(`href="/assets/%d"`, orders.ID)) || !strings.Contains(g.body, `href="/dags/report"`) {
			t.Fatalf("asset graph: %d; want shop producing 2 assets and orders scheduling report:\n%s", g.status, g.body)
		}
		g = b.get("/assets/graph?q=cust")
		if strings.Count(g.body, `class="node k-asset"`) != 1 || strings.Contains(g.body, `href="/dags/report"`) || !strings.Contains(g.body, "1 of 1 assets") {
			t.Errorf("asset graph filtered to customers: want it and its producer only:\n%s", g.body)
		}
		if r := b.get("/assets/graph?status=gone"); r.status != http.StatusBadRequest {
			t.Errorf("bad status: %d, want 400", r.status)
		}
		if a := b.get(fmt.Sprintf("/assets/%d", orders.ID)); !strings.Contains(a.body, `href="/assets/graph?q=orders"`) {
			t.Error("an asset's page does not link its graph")
		}
	})
}
