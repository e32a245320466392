package httpwatch_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weirflow/weir/internal/testutil/wait"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/httpwatch"
	"github.com/weirflow/weir/internal/trigger/triggertest"
)

// api is a JSON endpoint on loopback: GET /orders answers {"data": [...]}
// with the items added so far (in the order added, or only those whose
// updated_at is at or after ?since=), or 503 while down.
type api struct {
	mu      sync.Mutex
	items   []map[string]any
	queries []string
	down    bool
	srv     *httptest.Server
}

func newAPI(t *testing.T) *api {
	a := &api{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.queries = append(a.queries, r.URL.RawQuery)
		if a.down || r.URL.Path != "/orders" || r.Header.Get("Authorization") != "Bearer t0k" {
			http.Error(rw, "unavailable", http.StatusServiceUnavailable)
			return
		}
		since := r.URL.Query().Get("since")
		out := []map[string]any{}
		for _, it := range a.items {
			if since == "" || it["updated_at"].(string) >= since {
				out = append(out, it)
			}
		}
		_ = json.NewEncoder(rw).Encode(map[string]any{"data": out})
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// add appends items "id@minute[@region]", e.g. "7@03@eu": id 7, updated
// at 10:03.
func (a *api) add(items ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range items {
		f := strings.SplitN(s, "@", 3)
		it := map[string]any{"id": json.Number(f[0]), "updated_at": "2026-12-01T10:" + f[1] + ":00Z"}
		if len(f) == 3 {
			it["region"] = f[2]
		}
		a.items = append(a.items, it)
	}
}

func (a *api) setDown(down bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.down = down
}

// queried reports whether a request had the query q.
func (a *api) queried(q string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Contains(a.queries, q)
}

func (a *api) lastQuery() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.queries[len(a.queries)-1]
}

// start runs an http_json watcher for w on the api with kwargs (the
// connection, endpoint, header, items, cursor and id added).
func (a *api) start(t *testing.T, w *triggertest.Watcher, kwargs string) *triggertest.Run {
	t.Helper()
	kwargs = `{"http_conn_id":"shop","endpoint":"orders","headers":{"Authorization":"Bearer t0k"},"items":".data[]","cursor":".updated_at","id":".id","poll_interval":"10ms"` +
		strings.Replace(kwargs, "{", ",", 1)
	kwargs = strings.Replace(kwargs, ",}", "}", 1)
	tr := triggertest.New(t, httpwatch.Type, kwargs)
	return w.Start(t, tr, &trigger.Runtime{Connections: triggertest.Conns{"shop": a.srv.URL}})
}

// TestEachItemOnceWithEqualCursorsAcrossARestart: items sharing one
// updated_at are each recorded once, told apart by their id, in cursor
// order whatever the answer's order, including one with that same
// updated_at that appears later; a watcher started again from the
// committed cursor records only what came after.
func TestEachItemOnceWithEqualCursorsAcrossARestart(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.add("2@01", "1@01", "3@00")
	w := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "orders"})
	run := a.start(t, w, `{}`)
	w.WaitEvents(t, "orders", 3)
	a.add("4@01", "5@02")
	triggertest.ExpectFields(t, w.WaitEvents(t, "orders", 5), "id", "3,1,2,4,5", "by updated_at, then id")
	run.Cancel(t)
	if got := string(w.Cursor("orders")); got != `{"cursor":"2026-12-01T10:02:00Z","id":5}` {
		t.Errorf("cursor %s, want item 5's updated_at and id", got)
	}

	again := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "orders"})
	again.SetCursor("orders", w.Cursor("orders"))
	a.start(t, again, `{}`)
	a.add("6@02")
	triggertest.ExpectFields(t, again.WaitEvents(t, "orders", 1), "id", "6", "after the restart: only 6")
}

// TestParamsPassTheCursorToTheServer: the first request has no since;
// later ones carry the committed cursor, and the server's filtering does
// not make the watcher record anything twice.
func TestParamsPassTheCursorToTheServer(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.add("1@00", "2@01")
	w := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "orders"})
	a.start(t, w, `{"params":{"since":"{{cursor}}","after_id":"{{id}}","limit":"100"}}`)
	w.WaitEvents(t, "orders", 2)
	a.add("3@01", "4@05")
	triggertest.ExpectFields(t, w.WaitEvents(t, "orders", 4), "id", "1,2,3,4", "each item once, the server filtering too")
	a.mu.Lock()
	first := a.queries[0]
	a.mu.Unlock()
	if first != "limit=100" {
		t.Errorf("first request's query %q, want only limit=100 (no cursor yet)", first)
	}
	wait.Until(t, triggertest.Bound, "a request from item 4's cursor", func() bool {
		return a.lastQuery() == "after_id=4&limit=100&since=2026-12-01T10%3A05%3A00Z"
	})
}

// TestRoutingAndOneRequestFromTheOldestCursor: with route, each asset gets
// the items whose route_field matches its glob (an item matching none is
// skipped); an asset whose cursor is set back gets its items again, the
// other nothing, and the one request of a poll starts from the oldest
// cursor.
func TestRoutingAndOneRequestFromTheOldestCursor(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.add("1@00@eu-west", "2@01@us-east", "3@02@apac", "4@03@eu-north")
	w := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "eu"}, trigger.AssetInfo{Name: "us"})
	a.start(t, w, `{"params":{"since":"{{cursor}}"},"route_field":".region","route":{"eu":"eu-*","us":"us-*"},"partition_key":".region"}`)
	w.WaitEvents(t, "eu", 2)
	w.WaitEvents(t, "us", 1)
	if string(w.Cursor("eu")) != `{"cursor":"2026-12-01T10:03:00Z","id":4}` || string(w.Cursor("us")) != string(w.Cursor("eu")) {
		t.Errorf("cursors eu %s, us %s, want both at item 4", w.Cursor("eu"), w.Cursor("us"))
	}
	if pk := w.Events("eu")[1].PartitionKey; pk != "eu-north" {
		t.Errorf("partition key %q, want the item's region", pk)
	}
	w.SetCursor("us", json.RawMessage(`{"cursor":"2026-12-01T10:00:00Z","id":1}`))
	triggertest.ExpectFields(t, w.WaitEvents(t, "us", 2), "id", "2,2", "us after its cursor was set back: item 2 again")
	if !a.queried("since=2026-12-01T10%3A00%3A00Z") {
		t.Errorf("no request from us's cursor (the oldest) after it was set back; the last was %q", a.lastQuery())
	}
	a.add("5@04@eu-south")
	triggertest.ExpectFields(t, w.WaitEvents(t, "eu", 3), "id", "1,4,5", "eu (apac matched no route)")
}

// TestABacklogDrainsInBoundedPolls: max_items bounds each commit; the
// cursor moves to the last item committed, so every item arrives, in
// order, over several polls.
func TestABacklogDrainsInBoundedPolls(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.add("5@04", "3@02", "1@00", "4@03", "2@01")
	w := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "orders"})
	a.start(t, w, `{"max_items":2}`)
	triggertest.ExpectFields(t, w.WaitEvents(t, "orders", 5), "id", "1,2,3,4,5", "every item, in cursor order")
	if n := triggertest.LargestCommit(w); n > 2 {
		t.Errorf("a commit of %d events, want at most max_items (2)", n)
	}
}

// TestAnEndpointThatIsDownIsRetried: failed polls are recorded with the
// status, nothing is committed, and items arrive once it is up.
func TestAnEndpointThatIsDownIsRetried(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.setDown(true)
	a.add("1@00")
	w := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "orders"})
	a.start(t, w, `{}`)
	wait.Until(t, triggertest.Bound, "two failed polls", func() bool { return len(w.PollErrors()) >= 2 })
	if err := w.PollErrors()[0]; !strings.Contains(err.Error(), "503") || strings.Contains(err.Error(), "t0k") {
		t.Errorf("poll error %q, want the status and no header value", err)
	}
	if len(w.Commits()) != 0 {
		t.Errorf("%d commits while the endpoint was down, want none", len(w.Commits()))
	}
	a.setDown(false)
	w.WaitEvents(t, "orders", 1)
}

// TestABadCursorIsAPollError: a cursor set to something else is refused,
// naming the asset, and nothing is recorded until it is fixed.
func TestABadCursorIsAPollError(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.add("1@00")
	w := triggertest.NewWatcher("orders", trigger.AssetInfo{Name: "orders"})
	w.SetCursor("orders", json.RawMessage(`[1]`))
	a.start(t, w, `{}`)
	wait.Until(t, triggertest.Bound, "a failed poll", func() bool { return len(w.PollErrors()) >= 1 })
	if err := w.PollErrors()[0]; !strings.Contains(err.Error(), "asset orders: cursor [1] is not an http_json cursor") {
		t.Errorf("poll error %q, want it to name the asset and the cursor", err)
	}
	w.SetCursor("orders", nil)
	w.WaitEvents(t, "orders", 1)
}
