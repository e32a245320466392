package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/scheduler"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// syncAssetDag records a DAG with its assets, as the DAG processor does.
func (e *env) syncAssetDag(d core.DAG) {
	e.t.Helper()
	e.syncDag(d)
	if err := e.st.AssetSync(context.Background(), &store.AssetSyncParams{Spec: &d, Now: e.clk.Now()}); err != nil {
		e.t.Fatal(err)
	}
}

func TestAssetsReadAndCreateEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	orders := core.Asset{Name: "orders", URI: "s3://lake/orders", Group: "sales"}
	e.syncAssetDag(core.DAG{DagID: "prod", Assets: []core.Asset{orders, {Name: "raw", URI: "s3://lake/raw"}},
		Tasks: []core.Task{{TaskID: "load", Operator: "noop", Outlets: []core.AssetRef{{Name: "orders"}}}}})
	e.syncAssetDag(core.DAG{DagID: "cons", Assets: []core.Asset{orders}, AssetSchedule: []core.AssetRef{{Name: "orders"}},
		Tasks: []core.Task{{TaskID: "use", Operator: "noop"}}})

	var list api.AssetCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets?name_pattern=ord", nil, &list)
	if list.TotalEntries != 1 || list.Assets[0].Name != "orders" || list.Assets[0].Group != "sales" {
		t.Fatalf("assets matching ord: %+v", list)
	}
	id := list.Assets[0].ID
	var a core.AssetModel
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets/"+itoa(id), nil, &a)
	if len(a.ScheduledDags) != 1 || a.ScheduledDags[0].DagID != "cons" || len(a.Producing) != 1 || a.Producing[0].DagID != "prod" {
		t.Errorf("asset: %+v, want scheduled dag cons and producer prod.load", a)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/assets/999", nil, "asset 999")

	// External systems post events (op role), audited, queued for consumers.
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "POST", "/api/v2/assets/events", map[string]any{"asset_id": id}, "")
	e.mustProblem(http.StatusNotFound, core.RoleOp, "POST", "/api/v2/assets/events", map[string]any{"asset_id": 999}, "asset 999")
	e.mustProblem(http.StatusBadRequest, core.RoleOp, "POST", "/api/v2/assets/events",
		map[string]any{"asset_id": id, "extra": []int{1}}, `"extra" must be a JSON object`)
	var ev core.AssetEvent
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/assets/events",
		map[string]any{"asset_id": id, "extra": map[string]any{"rows": 42}}, &ev)
	if ev.AssetID != id || ev.SourceKind != core.AssetSourceAPI || string(ev.Extra) != `{"rows":42}` {
		t.Errorf("created event: %+v", ev)
	}
	if !e.hasAudit("op", "asset_event.create", "orders") {
		t.Error("event creation is not in the audit log")
	}
	var queued api.QueuedEventCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/cons/assets/queuedEvents", nil, &queued)
	if queued.TotalEntries != 1 || queued.QueuedEvents[0].LastEventID != ev.ID || queued.QueuedEvents[0].DagDisplayName != "cons" {
		t.Errorf("queued events of cons: %+v", queued)
	}
	var events api.AssetEventCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets/events?asset_id="+itoa(id), nil, &events)
	if events.TotalEntries != 1 || events.AssetEvents[0].ID != ev.ID {
		t.Errorf("events of orders: %+v", events)
	}

	// The scheduler consumes the queue; the run shows what triggered it.
	s := &scheduler.Scheduler{Store: e.st, Clock: e.clk}
	if err := s.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	var runsOf api.DAGRunCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/cons/dagRuns", nil, &runsOf)
	if runsOf.TotalEntries != 1 || runsOf.DagRuns[0].RunType != core.RunAssetTriggered {
		t.Fatalf("runs of cons: %+v, want one asset_triggered run", runsOf)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET",
		"/api/v2/dags/cons/dagRuns/"+runsOf.DagRuns[0].RunID+"/upstreamAssetEvents", nil, &events)
	if events.TotalEntries != 1 || events.AssetEvents[0].ID != ev.ID {
		t.Errorf("upstream events of the asset-triggered run: %+v", events)
	}
	// An event answers Airflow's AssetEventResponse, with the runs it created.
	var raw struct {
		AssetEvents []map[string]json.RawMessage `json:"asset_events"`
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets/events?asset_id="+itoa(id), nil, &raw)
	for _, f := range []string{"id", "asset_id", "uri", "name", "group", "extra", "source_map_index", "created_dagruns", "timestamp"} {
		if _, ok := raw.AssetEvents[0][f]; !ok {
			t.Errorf("event: no %q", f)
		}
	}
	var made []map[string]json.RawMessage
	if err := json.Unmarshal(raw.AssetEvents[0]["created_dagruns"], &made); err != nil || len(made) != 1 ||
		string(made[0]["run_id"]) != strconv.Quote(runsOf.DagRuns[0].RunID) || string(made[0]["dag_id"]) != `"cons"` {
		t.Errorf("created_dagruns = %s (%v), want the asset-triggered run of cons", raw.AssetEvents[0]["created_dagruns"], err)
	}
	for _, f := range []string{"run_id", "dag_id", "logical_date", "start_date", "end_date", "state", "data_interval_start", "data_interval_end"} {
		if _, ok := made[0][f]; !ok {
			t.Errorf("created run: no %q", f)
		}
	}
	manual, err := service.New(service.Config{Store: e.st, Clock: e.clk}).TriggerRun(t.Context(), core.System, runs.TriggerParams{DagID: "cons"})
	if err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/cons/dagRuns/"+manual.RunID+"/upstreamAssetEvents", nil, &events)
	if events.TotalEntries != 0 {
		t.Errorf("a manual run shows upstream events: %+v", events)
	}

	// raw is defined by prod only: inactive once prod is gone, hidden by default.
	if err := e.st.DagDeactivateMissing(t.Context(), &store.DagDeactivateParams{Keep: []string{"cons", "etl"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.AssetDeactivateOrphans(t.Context(), e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets", nil, &list)
	if list.TotalEntries != 1 || list.Assets[0].Name != "orders" {
		t.Errorf("active assets: %+v, want orders only", list)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets?only_active=false&uri_pattern=lake/raw", nil, &list)
	if list.TotalEntries != 1 || list.Assets[0].Active || list.Assets[0].InactiveSince == nil {
		t.Errorf("raw: %+v, want inactive with inactive_since", list)
	}
}

// An asset answers every field of Airflow 3's AssetResponse (its generated
// clients refuse a body without them), from the list and the GET alike:
// its users as Airflow's reference objects, its aliases and newest event.
func TestAssetsAnswerAirflowsFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	orders := core.Asset{Name: "orders", URI: "s3://lake/orders"}
	e.syncAssetDag(core.DAG{DagID: "prod", Assets: []core.Asset{orders},
		Tasks: []core.Task{{TaskID: "load", Operator: "noop", Outlets: []core.AssetRef{{Name: "orders"}}}}})
	e.syncAssetDag(core.DAG{DagID: "cons", Assets: []core.Asset{orders}, AssetSchedule: []core.AssetRef{{Name: "orders"}},
		Tasks: []core.Task{{TaskID: "use", Operator: "noop", Inlets: []core.AssetRef{{Name: "orders"}}}}})
	check := func(what string, a map[string]json.RawMessage) {
		t.Helper()
		for _, f := range []string{"id", "name", "uri", "group", "extra", "created_at", "updated_at", "scheduled_dags",
			"producing_tasks", "consuming_tasks", "aliases", "last_asset_event"} {
			if _, ok := a[f]; !ok {
				t.Errorf("%s: no %q", what, f)
			}
		}
		refs := map[string][]map[string]json.RawMessage{}
		for _, f := range []string{"scheduled_dags", "producing_tasks", "consuming_tasks"} {
			var list []map[string]json.RawMessage
			if err := json.Unmarshal(a[f], &list); err != nil || len(list) != 1 {
				t.Fatalf("%s: %s = %s (%v), want one reference", what, f, a[f], err)
			}
			refs[f] = list
		}
		for f, want := range map[string][]string{"scheduled_dags": {"dag_id", "created_at", "updated_at"},
			"producing_tasks": {"dag_id", "task_id", "created_at", "updated_at"}, "consuming_tasks": {"dag_id", "task_id", "created_at", "updated_at"}} {
			for _, k := range want {
				if _, ok := refs[f][0][k]; !ok {
					t.Errorf("%s: %s has no %q: %v", what, f, k, refs[f][0])
				}
			}
		}
		if string(refs["scheduled_dags"][0]["dag_id"]) != `"cons"` || string(a["aliases"]) != "[]" || string(a["last_asset_event"]) != "null" {
			t.Errorf("%s: scheduled_dags %s aliases %s last_asset_event %s", what, a["scheduled_dags"], a["aliases"], a["last_asset_event"])
		}
	}
	var list struct {
		Assets []map[string]json.RawMessage `json:"assets"`
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets", nil, &list)
	if len(list.Assets) != 1 {
		t.Fatalf("assets: %v", list.Assets)
	}
	check("list", list.Assets[0])
	var a map[string]json.RawMessage
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/assets/"+string(list.Assets[0]["id"]), nil, &a)
	check("get", a)
}

// Materializing an asset runs the one DAG that produces it; none, or
// several, is an error that says so and creates nothing.
func TestMaterializeAsset(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	orders := core.Asset{Name: "orders", URI: "s3://lake/orders"}
	raw := core.Asset{Name: "raw", URI: "s3://lake/raw"}
	producer := func(dagID string, assets ...core.Asset) core.DAG {
		var outs []core.AssetRef
		for _, a := range assets {
			outs = append(outs, core.AssetRef{Name: a.Name})
		}
		return core.DAG{DagID: dagID, Assets: assets, Tasks: []core.Task{
			{TaskID: "extract", Operator: "noop"}, {TaskID: "load", Operator: "noop", Outlets: outs}}}
	}
	for _, d := range []core.DAG{producer("prod", orders), producer("a", raw), producer("b", raw),
		{DagID: "cons", Assets: []core.Asset{orders}, AssetSchedule: []core.AssetRef{{Name: "orders"}}, Tasks: []core.Task{{TaskID: "use", Operator: "noop"}}}} {
		e.syncAssetDag(d)
	}
	id := func(name string) string {
		a, err := e.st.AssetGetByName(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		return itoa(a.ID)
	}
	var run api.DAGRunResponse
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/assets/"+id("orders")+"/materialize", nil, &run)
	if run.DagID != "prod" || run.RunType != core.RunManual || run.State != core.RunQueued {
		t.Errorf("materialized orders: %+v, want a queued manual run of prod", run)
	}
	if !e.hasAudit("op", "dag_run.trigger", "prod/"+run.RunID) {
		t.Error("the materialization is not audited as a trigger")
	}
	e.mustProblem(http.StatusConflict, core.RoleOp, "POST", "/api/v2/assets/"+id("raw")+"/materialize", nil, "DAGs a, b all produce it")
	e.mustProblem(http.StatusNotFound, core.RoleOp, "POST", "/api/v2/assets/999/materialize", nil, "asset_id 999")
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "POST", "/api/v2/assets/"+id("orders")+"/materialize", nil, "")
	var page api.DAGRunCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/~/dagRuns", nil, &page)
	if page.TotalEntries != 1 {
		t.Errorf("runs after one materialization and three refusals: %d", page.TotalEntries)
	}
}

// Queued events are read and deleted by DAG, by asset and by both, as
// Airflow's routes; a delete is audited and leaves the DAG untriggered,
// one of nothing is a 404.
func TestQueuedEventRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	orders := core.Asset{Name: "orders", URI: "s3://lake/orders"}
	raw := core.Asset{Name: "raw", URI: "s3://lake/raw"}
	for _, d := range []core.DAG{
		{DagID: "cons", Assets: []core.Asset{orders, raw}, AssetSchedule: []core.AssetRef{{Name: "orders"}, {Name: "raw"}}, Tasks: []core.Task{{TaskID: "use", Operator: "noop"}}},
		{DagID: "other", Assets: []core.Asset{orders}, AssetSchedule: []core.AssetRef{{Name: "orders"}}, Tasks: []core.Task{{TaskID: "use", Operator: "noop"}}},
	} {
		e.syncAssetDag(d)
	}
	ids := map[string]string{}
	for _, name := range []string{"orders", "raw"} {
		a, err := e.st.AssetGetByName(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = itoa(a.ID)
		e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/assets/events", map[string]any{"asset_id": a.ID}, nil)
	}
	queued := func(path string) string {
		t.Helper()
		var page api.QueuedEventCollection
		e.must(http.StatusOK, core.RoleViewer, "GET", path, nil, &page)
		var got []string
		for _, q := range page.QueuedEvents {
			got = append(got, q.DagID+"/"+q.AssetName)
		}
		if page.TotalEntries != len(got) {
			t.Errorf("GET %s: total_entries %d for %d entries", path, page.TotalEntries, len(got))
		}
		return strings.Join(got, " ")
	}
	if got := queued("/api/v2/assets/" + ids["orders"] + "/queuedEvents"); got != "cons/orders other/orders" {
		t.Errorf("queued events of orders: %q", got)
	}
	if got := queued("/api/v2/dags/cons/assets/queuedEvents"); got != "cons/orders cons/raw" {
		t.Errorf("queued events of cons: %q", got)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/cons/assets/queuedEvents?before=2000-01-01T00:00:00Z", nil,
		`no asset events are queued for dag "cons"`) // none is a 404, as Airflow's
	var one api.QueuedEventResponse
	e.must(http.StatusOK, core.RoleViewer, "GET", "/api/v2/dags/cons/assets/"+ids["raw"]+"/queuedEvents", nil, &one)
	if one.DagID != "cons" || one.AssetName != "raw" || one.DagDisplayName != "cons" {
		t.Errorf("cons's queued events of raw: %+v", one)
	}

	e.mustProblem(http.StatusForbidden, core.RoleViewer, "DELETE", "/api/v2/dags/cons/assets/"+ids["raw"]+"/queuedEvents", nil, "")
	e.must(http.StatusNoContent, core.RoleOp, "DELETE", "/api/v2/dags/cons/assets/"+ids["raw"]+"/queuedEvents", nil, nil)
	if !e.hasAudit("op", "asset_queue.clear", "dag cons, asset "+ids["raw"]) {
		t.Error("the delete is not audited")
	}
	if got := queued("/api/v2/dags/cons/assets/queuedEvents"); got != "cons/orders" {
		t.Errorf("queued events of cons after deleting raw's: %q", got)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/cons/assets/"+ids["raw"]+"/queuedEvents", nil, `no asset events are queued for dag "cons" of asset`)
	e.mustProblem(http.StatusNotFound, core.RoleOp, "DELETE", "/api/v2/dags/cons/assets/"+ids["raw"]+"/queuedEvents", nil, "no asset events are queued")
	e.must(http.StatusNoContent, core.RoleOp, "DELETE", "/api/v2/assets/"+ids["orders"]+"/queuedEvents", nil, nil)
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/assets/"+ids["orders"]+"/queuedEvents", nil, "no asset events are queued for asset")
	e.mustProblem(http.StatusNotFound, core.RoleOp, "DELETE", "/api/v2/dags/cons/assets/queuedEvents", nil, "dag cons")
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/assets/999/queuedEvents", nil, "asset_id 999")
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/nope/assets/queuedEvents", nil, "nope")
}
