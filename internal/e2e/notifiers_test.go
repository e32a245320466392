package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// nightlyDAG fails; its DAG-level failure callbacks post a webhook and emit
// an event of ops_alerts, which starts opsResponderDAG.
const nightlyDAG = `dag_id: nightly
schedule: null
assets:
  - {name: ops_alerts, uri: "file:///tmp/weir-e2e/ops_alerts"}
on_failure:
  - {notifier: webhook, conn_id: ops_hook}
  - {notifier: webhook, conn_id: ops_bearer}
  - notifier: asset_event
    asset: ops_alerts
    partition_key: "{{ .dag_id }}/{{ .run_id }}"
    extra: {failed_run: "{{ .run_id }}", event: "{{ .callback.event }}"}
tasks:
  load:
    operator: bash
    bash_command: exit 1
`

const opsResponderDAG = `dag_id: ops_responder
schedule: [ops_alerts]
assets:
  - {name: ops_alerts, uri: "file:///tmp/weir-e2e/ops_alerts"}
tasks:
  page:
    operator: bash
    bash_command: 'echo "responding to {{ range .triggering_asset_events }}{{ .source_dag_id }} {{ .source_run_id }} task=[{{ .source_task_id }}] {{ .partition_key }}{{ end }}"'
`

// loopDAG fails on every run and its failure callback emits the event it
// is scheduled on: a feedback loop the chain-depth guard stops.
const loopDAG = `dag_id: loop
schedule: [loop_alerts]
assets:
  - {name: loop_alerts, uri: "file:///tmp/weir-e2e/loop_alerts"}
on_failure: {notifier: asset_event, asset: loop_alerts}
tasks:
  fail:
    operator: bash
    bash_command: exit 1
`

// hookServer is a loopback HTTP server recording the webhooks it gets.
type hookServer struct {
	mu      sync.Mutex
	got     []map[string]any
	auths   []string
	ids     []string
	bearers []string // Authorization and X-Team of bearer-token webhooks
}

func startHookServer(t *testing.T) (*hookServer, string) {
	t.Helper()
	h := &hookServer{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		raw, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/hooks/weir" || json.Unmarshal(raw, &body) != nil {
			http.Error(w, "want a JSON POST to /hooks/weir", http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if auth := r.Header.Get("Authorization"); strings.HasPrefix(auth, "Bearer ") {
			h.bearers = append(h.bearers, auth+" team="+r.Header.Get("X-Team")+" query="+r.URL.RawQuery)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		user, pass, _ := r.BasicAuth()
		h.got, h.auths, h.ids = append(h.got, body), append(h.auths, user+":"+pass), append(h.ids, r.Header.Get("X-Weir-Delivery"))
		w.WriteHeader(http.StatusNoContent)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return h, "http://ops:s3cret@" + ln.Addr().String() + "/hooks/weir"
}

// TestNotifiers is docs/requirements.md#e's notifier "done when" on both
// engines: a DAG-level failure callback's webhook reaches a loopback server
// with the documented body, and its asset_event notifier emits an event
// that starts an operational DAG; the event carries the DAG and run and no
// task. A DAG whose failure callback emits the event it is scheduled on is
// stopped by the feedback-loop guard.
func TestNotifiers(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, env []string) {
		hooks, hookURL := startHookServer(t)
		home, dags := t.TempDir(), t.TempDir()
		writeFile(t, filepath.Join(dags, "nightly.yaml"), nightlyDAG)
		writeFile(t, filepath.Join(dags, "ops.yaml"), opsResponderDAG)
		writeFile(t, filepath.Join(dags, "loop.yaml"), loopDAG)
		s := startStandalone(t, home, dags, env...)
		mustWeir(t, env, "connections", "add", "ops_hook", hookURL, "--home", home)
		// A password without a login is a bearer token; the extra's headers are sent.
		bearerURL := strings.Replace(hookURL, "ops:s3cret@", ":tok-123@", 1) + "?" + url.Values{"__extra__": {`{"headers": {"x-team": "data"}}`}}.Encode()
		mustWeir(t, env, "connections", "add", "ops_bearer", bearerURL, "--home", home)
		api := s.api.with(t)
		for _, d := range []string{"nightly", "ops_responder", "loop"} {
			api.WaitDAG(d)
		}

		api.Trigger("nightly", "n1", nil)
		if run := api.WaitRunDone("nightly", "n1"); run.State != core.RunFailed {
			t.Fatalf("nightly is %s, want failed", run.State)
		}
		for _, cb := range api.callbacksOf("nightly", "n1", 3) {
			if cb.State != core.CallbackSuccess {
				t.Errorf("nightly's %s callback #%d is %s: %s", cb.Event, cb.SpecIndex, cb.State, cb.Error)
			}
		}
		run, evs := api.waitAssetRun("ops_responder", 1)
		if len(evs) != 1 {
			t.Fatalf("ops_responder run %s consumed %d events, want 1", run.RunID, len(evs))
		}
		ev := evs[0]
		if ev.SourceKind != core.AssetSourceCallback || ev.SourceDagID != "nightly" || ev.SourceRunID != "n1" ||
			ev.SourceTaskID != "" || ev.SourceMapIndex != core.NoMapIndex || ev.SourceCallbackID == 0 || ev.CallbackDepth != 1 ||
			ev.PartitionKey == nil || *ev.PartitionKey != "nightly/n1" || ev.IdempotencyKey != fmt.Sprintf("callback/%d", ev.SourceCallbackID) {
			t.Errorf("the notifier's event %+v; want source callback, nightly/n1, no task, depth 1, partition nightly/n1", ev)
		}
		var extra map[string]any
		if err := json.Unmarshal(ev.Extra, &extra); err != nil || extra["failed_run"] != "n1" || extra["event"] != "on_failure" {
			t.Errorf("the event's extra %s, want the rendered templates", ev.Extra)
		}
		if log := api.Log("ops_responder", run.RunID, "page", 1); !strings.Contains(log, "responding to nightly n1 task=[] nightly/n1") {
			t.Errorf("ops_responder's log lacks the event's provenance:\n%s", log)
		}

		hooks.mu.Lock()
		got, auths, ids, bearers := hooks.got, hooks.auths, hooks.ids, hooks.bearers
		hooks.mu.Unlock()
		if fmt.Sprint(bearers) != "[Bearer tok-123 team=data query=]" {
			t.Errorf("bearer webhooks %q; want one with the connection's token and X-Team header, without the extra in the URL", bearers)
		}
		if len(got) != 1 {
			t.Fatalf("the hook server got %d webhooks, want 1", len(got))
		}
		b := got[0]
		if b["version"] != 1.0 || b["event"] != "on_failure" || b["level"] != "dag" || b["outcome"] != "failed" ||
			b["dag_id"] != "nightly" || b["run_id"] != "n1" || b["run_type"] != "manual" || b["delivery_id"] != ids[0] ||
			b["attempt"] != 1.0 || auths[0] != "ops:s3cret" {
			t.Errorf("webhook body %v (auth %q, delivery %q); want the documented body with basic auth from the connection", b, auths[0], ids[0])
		}
		if _, hasTask := b["task_id"]; hasTask {
			t.Errorf("a DAG-level webhook carries task_id: %v", b)
		}

		// The loop: each failed run of loop emits the event that starts
		// the next, until the event would be 4 callbacks deep.
		api.Trigger("loop", "l0", nil)
		var runs []core.DagRun
		waitFor(t, "loop's chain to stop at the guard", func() (bool, string) {
			var page struct {
				DagRuns []core.DagRun `json:"dag_runs"`
			}
			api.Get("/api/v2/dags/loop/dagRuns?limit=100&order_by=id", &page)
			runs = page.DagRuns
			if len(runs) != 4 || runs[3].State != core.RunFailed {
				return false, fmt.Sprintf("%d runs", len(runs))
			}
			cbs := api.callbacksOf("loop", runs[3].RunID, 1)
			return cbs[0].State == core.CallbackFailed, fmt.Sprintf("last callback %+v", cbs[0])
		})
		last := api.callbacksOf("loop", runs[3].RunID, 1)[0]
		if !strings.Contains(last.Error, "feedback loop") || !strings.Contains(last.Error, "max_chain_depth 3") {
			t.Errorf("the guard's callback error %q; want it to name the feedback loop and the limit", last.Error)
		}
		for _, r := range runs[:3] {
			if cb := api.callbacksOf("loop", r.RunID, 1)[0]; cb.State != core.CallbackSuccess {
				t.Errorf("run %s's callback is %s (%s), want success", r.RunID, cb.State, cb.Error)
			}
		}
		var page struct {
			AssetEvents []core.AssetEvent `json:"asset_events"`
		}
		api.Get(fmt.Sprintf("/api/v2/assets/events?asset_id=%d&limit=100", api.asset("loop_alerts").ID), &page)
		var depths []int
		for _, e := range page.AssetEvents {
			depths = append(depths, e.CallbackDepth)
		}
		if fmt.Sprint(depths) != "[1 2 3]" {
			t.Errorf("loop_alerts events have callback depths %v, want [1 2 3] and nothing more", depths)
		}
	})
}
