package weir

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// goOpsCallbacks runs examples/sdk's go_ops_failing_load with conf
// {"fail": true} under `bin standalone` on engine (sqlite or postgres) and
// checks docs/go-sdk.md#callbacks as a user sees it: the Go OnRetry
// callback runs on the first failure, the Go OnRunFailure callback runs
// when the run fails and emits an event of go_ops_alerts with the DAG and
// run and no task, and that event starts a run of go_ops_responder, whose
// task reads the failed run from it.
func goOpsCallbacks(t *testing.T, bin, engine string) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	api, c, stderr := standaloneServing(ctx, t, bin, engine, "go_ops_failing_load", "go_ops_responder")
	var run struct {
		RunID string `json:"dag_run_id"`
	}
	call(t, c, http.MethodPost, api+"/dags/go_ops_failing_load/dagRuns", `{"dag_run_id": "fails", "conf": {"fail": true}}`, &run)
	runPath := api + "/dags/go_ops_failing_load/dagRuns/" + run.RunID
	var cbs struct {
		Callbacks    []core.Callback `json:"callbacks"`
		TotalEntries int             `json:"total_entries"`
	}
	poll(ctx, t, "go_ops_failing_load's two callbacks to end", func() bool {
		call(t, c, http.MethodGet, runPath+"/callbacks?limit=100", "", &cbs)
		done := 0
		for _, cb := range cbs.Callbacks {
			if cb.State.Terminal() {
				done++
			}
		}
		return cbs.TotalEntries == 2 && done == 2
	})
	var got []string
	for _, cb := range cbs.Callbacks {
		got = append(got, fmt.Sprintf("%s %s %s %s", cb.Level, cb.TaskID, cb.Event, cb.State))
		if cb.State != core.CallbackSuccess {
			t.Errorf("callback %d (%s) is %s: %s\n%s", cb.ID, cb.Event, cb.State, cb.Error, stderr.String())
		}
	}
	if want := "[task load on_retry success dag  on_failure success]"; fmt.Sprint(got) != want {
		t.Errorf("callbacks %v, want %s", got, want)
	}
	var log struct {
		Content []string `json:"content"` // the log's lines
	}
	call(t, c, http.MethodGet, fmt.Sprintf("%s/callbacks/%d/logs", runPath, cbs.Callbacks[1].ID), "", &log)
	if !strings.Contains(strings.Join(log.Content, "\n"), "raised an ops alert") {
		t.Errorf("the failure callback's log lacks its own line:\n%s", strings.Join(log.Content, "\n"))
	}

	var responder struct {
		DagRuns []struct {
			RunID string `json:"dag_run_id"`
			State string `json:"state"`
		} `json:"dag_runs"`
	}
	poll(ctx, t, "a run of go_ops_responder to succeed", func() bool {
		call(t, c, http.MethodGet, api+"/dags/go_ops_responder/dagRuns", "", &responder)
		return len(responder.DagRuns) == 1 && responder.DagRuns[0].State == "success"
	})
	var evs struct {
		AssetEvents []core.AssetEvent `json:"asset_events"`
	}
	call(t, c, http.MethodGet, api+"/dags/go_ops_responder/dagRuns/"+responder.DagRuns[0].RunID+"/upstreamAssetEvents", "", &evs)
	if len(evs.AssetEvents) != 1 {
		t.Fatalf("go_ops_responder's run came from %d events, want 1", len(evs.AssetEvents))
	}
	ev := evs.AssetEvents[0]
	if ev.SourceKind != core.AssetSourceCallback || ev.SourceDagID != "go_ops_failing_load" || ev.SourceRunID != run.RunID ||
		ev.SourceTaskID != "" || ev.SourceCallbackID != cbs.Callbacks[1].ID || ev.CallbackDepth != 1 ||
		ev.PartitionKey == nil || *ev.PartitionKey != "go_ops_failing_load/"+run.RunID {
		t.Errorf("the callback's event %+v; want source callback %d of go_ops_failing_load/%s, no task, depth 1", ev, cbs.Callbacks[1].ID, run.RunID)
	}
}
