package httptrigger_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/httptrigger"
	"github.com/weirflow/weir/internal/trigger/triggertest"
)

// TestWaitsForStatusAndQuery: a job endpoint that first fails, then
// reports the job running, then done; the trigger, through a connection
// with basic auth, fires on the answer whose body satisfies json_query,
// with the query's result, and logs the failing status once.
func TestWaitsForStatusAndQuery(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pw, _ := r.BasicAuth()
		if r.URL.Path != "/api/jobs/42" || user != "alice" || pw != "s3cret" || r.Header.Get("X-Trace") != "abc" {
			http.Error(w, "wrong request", http.StatusBadRequest)
			return
		}
		switch calls.Add(1) {
		case 1:
			http.Error(w, "starting", http.StatusServiceUnavailable)
		case 2:
			_, _ = w.Write([]byte(`{"state":"running"}`))
		default:
			_, _ = w.Write([]byte(`{"state":"done","rows":3}`))
		}
	}))
	t.Cleanup(srv.Close)
	uri := strings.Replace(srv.URL, "http://", "http://alice:s3cret@", 1) + "/api/"
	tr := triggertest.New(t, httptrigger.Type, `{"http_conn_id":"svc","endpoint":"jobs/42","headers":{"X-Trace":"abc"},
		"json_query":"select(.state == \"done\") | .rows","poke_interval":"10ms"}`)
	run := triggertest.Start(t, tr, &trigger.Runtime{Connections: triggertest.Conns{"svc": uri}})

	if got := string(run.Event(t)); got != `{"status":200,"result":3}` {
		t.Errorf("event = %s, want status 200 and the query's result 3", got)
	}
	if err := run.Wait(t); err != nil {
		t.Errorf("after its event the trigger returned %v", err)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("the server answered %d requests, want 3 (fail, running, done)", n)
	}
	if log := run.Log(); strings.Count(log, "503 Service Unavailable (waiting for [200])") != 1 || strings.Contains(log, "s3cret") {
		t.Errorf("log should name the 503 once and never the password:\n%s", log)
	}
}

// TestFiresOnAnExpectedStatusWithTheBody: without json_query the event
// holds the decoded body; a status outside expect_status keeps waiting.
func TestFiresOnAnExpectedStatusWithTheBody(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 || r.Method != http.MethodPost {
			w.WriteHeader(http.StatusOK) // not expected: keep polling
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"queued":true}`))
	}))
	t.Cleanup(srv.Close)
	tr := triggertest.New(t, httptrigger.Type, `{"url":"`+srv.URL+`/q","method":"post","expect_status":[201,202],"poke_interval":"10ms"}`)
	run := triggertest.Start(t, tr, nil)
	var got httptrigger.Payload
	if err := json.Unmarshal(run.Event(t), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status != http.StatusAccepted || fmt.Sprint(got.Body) != "map[queued:true]" {
		t.Errorf("event = %+v, want status 202 with the body {queued: true}", got)
	}
}

func TestAMissingConnectionEndsTheTrigger(t *testing.T) {
	t.Parallel()
	tr := triggertest.New(t, httptrigger.Type, `{"http_conn_id":"nope"}`)
	run := triggertest.Start(t, tr, &trigger.Runtime{Connections: triggertest.Conns{}})
	if err := run.Wait(t); err == nil || !strings.Contains(err.Error(), `look up connection "nope"`) {
		t.Errorf("Run = %v, want an error naming the missing connection", err)
	}
}

func TestCancelStopsAPollingTrigger(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	run := triggertest.Start(t, triggertest.New(t, httptrigger.Type, `{"url":"`+srv.URL+`"}`), nil)
	run.Cancel(t)
}
