package weir

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// ticketKwargs are the kwargs of the test's poll watcher.
type ticketKwargs struct {
	Queue string `json:"queue"`
}

var ticketWatcher = PollWatcher("sdk_test_tickets", "new tickets of a queue",
	func(context.Context, ticketKwargs, WatchedAsset, json.RawMessage) ([]WatchEvent, json.RawMessage, error) {
		return nil, nil, nil
	})

// TestPollWatcherKwargsCheckedAtLoad: a watcher made with PollWatcher is
// accepted with its kwargs and poll_interval, and its DAG is refused
// before anything runs when a kwarg is unknown, mistyped, or the interval
// is not a duration, naming the asset and watcher.
func TestPollWatcherKwargsCheckedAtLoad(t *testing.T) {
	t.Parallel()
	dagWith := func(kwargs any) *DAG {
		spec, err := NewTrigger("sdk_test_tickets", kwargs)
		if err != nil {
			t.Fatal(err)
		}
		tickets := Asset("tickets", AssetWatcher("support", spec))
		d := NewDAG("on_tickets", ScheduleOnAssets(tickets))
		d.Go("triage", nop, Inlets(tickets))
		return d
	}
	migrate := func(d *DAG) (int, string) {
		var stdout, stderr bytes.Buffer
		code := runWith(t.Context(), []string{"db", "migrate", "--home", t.TempDir()}, &stdout, &stderr,
			[]*DAG{d}, []TriggerType{ticketWatcher})
		return code, stderr.String()
	}
	if code, stderr := migrate(dagWith(map[string]any{"queue": "support", "poll_interval": "30s"})); code != 0 {
		t.Fatalf("a valid poll watcher: exit %d\n%s", code, stderr)
	}
	for _, c := range []struct {
		kwargs any
		want   string
	}{
		{map[string]any{"queue": 7}, `assets[0].watchers[0].trigger: trigger sdk_test_tickets: kwargs: kwarg "queue" must be a string`},
		{map[string]any{"queue": "a", "team": "x"}, `unknown kwarg "team"`},
		{map[string]any{"queue": "a", "poll_interval": "often"}, `kwarg "poll_interval" must be a duration`},
	} {
		code, stderr := migrate(dagWith(c.kwargs))
		if code != ExitInvalid || !strings.Contains(stderr, c.want) {
			t.Errorf("kwargs %v: exit %d, stderr:\n%s\nwant %d and %q", c.kwargs, code, stderr, ExitInvalid, c.want)
		}
	}
	d := NewDAG("sensor_on_watcher")
	d.Sensor("wait", TriggerSpec{Type: "sdk_test_tickets"})
	if code, stderr := migrate(d); code != ExitInvalid || !strings.Contains(stderr, `runs only as an asset watcher`) {
		t.Errorf("a sensor on a watcher type: exit %d, stderr:\n%s", code, stderr)
	}
}
