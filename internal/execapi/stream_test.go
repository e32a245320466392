package execapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/store"
)

// A running producer task (stream: true) pushes items over HTTP on both
// engines: a push is idempotent per sequence index, closing is final, and
// bad input — a push after the close, an item over 1 MiB, a gap, a task
// without stream: true — is refused naming the problem, nothing changed.
func TestStreamPushFromRunningTry(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			testStreamPush(t, execapitest.NewOn(t, openEngine(t, engine), execapi.Config{}))
		})
	}
}

func testStreamPush(t *testing.T, env *execapitest.Env) {
	ctx := t.Context()
	dag := core.DAG{DagID: "prod", Tasks: []core.Task{
		{TaskID: "produce", Operator: "noop", Stream: true},
		{TaskID: "plain", Operator: "noop"},
	}}
	run, _ := env.SeedRun(t, dag, "r1", "")
	wls := claimAll(t, env, 2)
	prod, plain := taskClient(env, wls["produce"]), taskClient(env, wls["plain"])
	for id, c := range map[string]*execclient.Client{"produce": prod, "plain": plain} {
		if _, err := c.Run(ctx, wls[id].TI.ID, execclient.RunRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	items := func(vals ...int) []json.RawMessage {
		out := make([]json.RawMessage, len(vals))
		for i, v := range vals {
			out[i], _ = json.Marshal(map[string]int{"n": v})
		}
		return out
	}
	h, err := prod.StreamHead(ctx)
	if err != nil || h.NextIndex != 0 || h.Closed {
		t.Fatalf("head before any push = %+v, %v; want empty and open", h, err)
	}
	if h, err = prod.PushStream(ctx, 0, items(0, 1, 2), false); err != nil || h.Accepted != 3 || h.NextIndex != 3 {
		t.Fatalf("push 0..2 = %+v, %v; want 3 accepted", h, err)
	}
	// A retried request (same indexes) adds nothing; an overlap adds the new ones.
	if h, err = prod.PushStream(ctx, 1, items(1, 2, 3), false); err != nil || h.Skipped != 2 || h.Accepted != 1 || h.NextIndex != 4 {
		t.Fatalf("push 1..3 after 0..2 = %+v, %v; want 2 skipped, 1 accepted", h, err)
	}
	_, err = prod.PushStream(ctx, 9, items(9), false)
	status(t, err, http.StatusConflict, "the first item has sequence index 9 but the stream holds 4 items")
	big := json.RawMessage(`"` + strings.Repeat("a", core.MaxStreamPayloadBytes) + `"`)
	_, err = prod.PushStream(ctx, 4, []json.RawMessage{big}, false)
	status(t, err, http.StatusBadRequest, "more than the limit of 1048576 bytes per event")
	_, err = plain.PushStream(ctx, 0, items(0), false)
	status(t, err, http.StatusBadRequest, `task "plain" does not declare stream: true`)
	if h, err = prod.PushStream(ctx, 4, nil, true); err != nil || !h.Closed || h.NextIndex != 4 {
		t.Fatalf("close = %+v, %v; want closed with 4 items", h, err)
	}
	if h, err = prod.PushStream(ctx, 4, nil, true); err != nil || !h.Closed {
		t.Fatalf("close again = %+v, %v; want a no-op", h, err)
	}
	_, err = prod.PushStream(ctx, 4, items(4), false)
	status(t, err, http.StatusConflict, "is closed (its last item has sequence index 3); nothing was appended")

	evs, err := env.Store.StreamEventList(ctx, &store.StreamEventListParams{StreamID: core.TaskStreamID(run.ID, "produce"), After: -1, Limit: 100})
	if err != nil || len(evs) != 4 || !evs[3].IsLast || string(evs[3].Payload) != `{"n":3}` {
		t.Fatalf("envelopes = %+v, %v; want 0..3, the last is_last", evs, err)
	}
	if _, err := env.Store.StreamGet(ctx, core.TaskStreamID(run.ID, "plain")); err == nil {
		t.Errorf("a refused push from plain created a stream")
	}
}
