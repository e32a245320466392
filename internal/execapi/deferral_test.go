package execapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/store"
)

// TestDeferralReport: a running try defers with a valid trigger (200, the
// try is deferred, its token then grants nothing); an unknown trigger type,
// bad kwargs, a negative timeout or a reserved next method are refused with
// 400 naming the problem, and the try still runs with no trigger created.
func TestDeferralReport(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	env.SeedRun(t, twoTaskDAG("d"), "r1", "")
	wls := claimAll(t, env, 2)
	c := taskClient(env, wls["a"])
	id := wls["a"].TI.ID
	if _, err := c.Run(ctx, id, execclient.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		d    core.Deferral
		want string
	}{
		{core.Deferral{Trigger: core.TriggerSpec{Type: "nope"}}, `unknown trigger type "nope"`},
		{core.Deferral{Trigger: core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"soon"}`)}}, `invalid duration`},
		{core.Deferral{Trigger: core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"1s"}`)}, Timeout: -1}, "timeout must not be negative"},
		{core.Deferral{Trigger: core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"1s"}`)}, NextMethod: core.NextMethodFail}, "reserved"},
		{core.Deferral{Trigger: core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"1s"}`)}, NextKwargs: json.RawMessage(`[1]`)}, "next_kwargs must be a JSON object"},
		{core.Deferral{}, "a deferral names its trigger"},
	}
	var sr *execclient.StateResponse
	for _, b := range bad {
		_, err := c.Defer(ctx, id, b.d)
		status(t, err, 400, b.want)
	}
	if ti := env.TI(t, id); ti.State != core.TIRunning || ti.TriggerID != nil {
		t.Fatalf("after refused deferrals the try is %s on trigger %v, want running without one", ti.State, ti.TriggerID)
	}
	if n, err := env.Store.TriggerCount(ctx, &store.TriggerListParams{}); err != nil || n != 0 {
		t.Fatalf("refused deferrals created %d triggers (%v)", n, err)
	}
	// Trigger fields with another state are refused too.
	req, _ := http.NewRequest(http.MethodPatch, c.BaseURL()+"/task-instances/"+id+"/state",
		strings.NewReader(`{"state": "success", "trigger": {"type": "timedelta"}}`))
	req.Header.Set("Authorization", "Bearer "+c.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "only a deferred state names a trigger") {
		t.Errorf("success with a trigger = %d %s, want 400 naming the problem", resp.StatusCode, body)
	}

	sr, err = c.Defer(ctx, id, core.Deferral{Trigger: core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"1m"}`)},
		NextMethod: "after", Timeout: core.Duration(3600e9)})
	if err != nil || sr.State != core.TIDeferred {
		t.Fatalf("defer = %+v, %v; want deferred", sr, err)
	}
	ti := env.TI(t, id)
	if ti.State != core.TIDeferred || ti.TriggerID == nil || ti.NextMethod != "after" || ti.TriggerTimeout == nil {
		t.Fatalf("deferred try = %+v", ti)
	}
	// A deferred try's token is refused for its lifecycle and its data.
	status(t, c.Heartbeat(ctx, id, execclient.HeartbeatRequest{}), 409, "")
	_, err = c.Defer(ctx, id, core.Deferral{Trigger: core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"1m"}`)}})
	status(t, err, 409, "")
}
