package triggerer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/wait"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/builtin"
	"github.com/weirflow/weir/internal/triggerer"
)

// counter is a watcher type: each poll finds the next number after its
// asset's cursor, up to kwargs' upto, as an event and the new cursor.
// Polls of a trigger are counted by trigger id in polls.
func counter(polls *sync.Map) trigger.Type {
	return trigger.Type{Name: "counter", Uses: trigger.UseWatcher, New: func(raw json.RawMessage) (trigger.Trigger, error) {
		var k struct {
			Upto int  `json:"upto"`
			Fail bool `json:"fail"`
		}
		if err := trigger.DecodeKwargs(raw, &k); err != nil {
			return nil, err
		}
		return runFunc(func(ctx context.Context, rt *trigger.Runtime) error {
			return trigger.Watch(ctx, rt, trigger.WatchOptions{Interval: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond},
				trigger.PerAsset(func(_ context.Context, a trigger.AssetInfo, cursor json.RawMessage) ([]trigger.WatchEvent, json.RawMessage, error) {
					n, _ := polls.LoadOrStore(rt.ID, new(int))
					*n.(*int)++
					if k.Fail {
						return nil, nil, errors.New("source down")
					}
					var last int
					_ = json.Unmarshal(cursor, &last)
					if last >= k.Upto {
						return nil, nil, nil
					}
					return []trigger.WatchEvent{{Payload: map[string]any{"n": last + 1, "asset": a.Name}, PartitionKey: strconv.Itoa(last + 1)}},
						json.RawMessage(strconv.Itoa(last + 1)), nil
				}))
		}), nil
	}}
}

// watchDag records DAG dagID defining assets and a consumer scheduled on
// the first one.
func watchDag(t *testing.T, st store.Store, dagID string, assets ...core.Asset) {
	t.Helper()
	d := core.DAG{DagID: dagID, Assets: assets, AssetSchedule: []core.AssetRef{{Name: assets[0].Name}},
		Tasks: []core.Task{{TaskID: "use", Operator: "noop"}}}
	must(t, st.WithTx(t.Context(), func(tx store.Store) error {
		if _, _, err := tx.DagSync(t.Context(), &store.DagSyncParams{Spec: d, Hash: fmt.Sprint(d), Now: time.Now()}); err != nil {
			return err
		}
		return tx.AssetSync(t.Context(), &store.AssetSyncParams{Spec: &d, Now: time.Now()})
	}))
}

func watcherOn(name, uri, kwargs string) core.Asset {
	return core.Asset{Name: name, URI: uri, Watchers: []core.AssetWatcher{{Name: "count",
		Trigger: core.TriggerSpec{Type: "counter", Kwargs: json.RawMessage(kwargs)}}}}
}

// events returns the payload numbers of asset's events, in order.
func events(t *testing.T, st store.Store, asset string) []int {
	t.Helper()
	a, err := st.AssetGetByName(t.Context(), asset)
	must(t, err)
	evs, err := st.AssetEventList(t.Context(), &store.AssetEventListParams{AssetID: a.ID})
	must(t, err)
	var out []int
	for _, e := range evs {
		var p struct{ N int }
		_ = json.Unmarshal(e.Extra, &p)
		out = append(out, p.N)
	}
	return out
}

func watcherOf(t *testing.T, st store.Store, asset string) core.Watcher {
	t.Helper()
	a, err := st.AssetGetByName(t.Context(), asset)
	must(t, err)
	ws, err := st.WatcherList(t.Context(), &store.WatcherListParams{AssetID: a.ID})
	must(t, err)
	if len(ws) != 1 {
		t.Fatalf("watchers of %s = %+v, want one", asset, ws)
	}
	return ws[0]
}

// TestWatcherCommitsEventsWithItsCursorAndSharesOnePoll: two assets whose
// watchers have equal triggers share one poll loop with a cursor each;
// each gets every number once, in order, with its cursor at the last one,
// and its consumer is queued.
func TestWatcherCommitsEventsWithItsCursorAndSharesOnePoll(t *testing.T) {
	for name, open := range engines() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			var polls sync.Map
			reg := builtin.Registry()
			must(t, reg.Register(counter(&polls)))
			svc := service.New(service.Config{Store: st, Triggers: reg})
			watchDag(t, st, "w", watcherOn("a", "mem://a", `{"upto":5}`), watcherOn("b", "mem://b", `{"upto":5}`))
			tr, _ := start(t, st, svc, reg, 0)
			for _, asset := range []string{"a", "b"} {
				wait.Until(t, 60*time.Second, "five events of "+asset, func() bool { return len(events(t, st, asset)) >= 5 })
			}
			wait.Until(t, 60*time.Second, "the poll health to be written", func() bool {
				return watcherOf(t, st, "a").LastPollAt != nil
			})
			if tr.Running() != 1 {
				t.Errorf("running triggers = %d, want the one shared poll loop", tr.Running())
			}
			for _, asset := range []string{"a", "b"} {
				if got := events(t, st, asset); fmt.Sprint(got) != "[1 2 3 4 5]" {
					t.Errorf("events of %s = %v, want 1..5 once each", asset, got)
				}
				w := watcherOf(t, st, asset)
				if string(w.Cursor) != "5" || w.Events != 5 || w.TriggererID != tr.ID() || w.ErrorsInRow != 0 {
					t.Errorf("watcher of %s = %+v, want cursor 5, 5 events, run by %s", asset, w, tr.ID())
				}
			}
			if q, err := st.AssetQueueList(t.Context(), "w"); err != nil || len(q) != 1 {
				t.Errorf("consumer queue = %+v, %v; want asset a's events queued", q, err)
			}

			// An admin moves the cursor back: the watcher redelivers from there.
			a := watcherOf(t, st, "a")
			must(t, st.StateSet(t.Context(), &store.StateSetParams{Scope: core.AssetScope(a.AssetID),
				Key: core.WatcherCursorKey("count"), Value: json.RawMessage("3"), Now: time.Now(), By: core.UserWriter("admin")}))
			wait.Until(t, 60*time.Second, "numbers 4 and 5 again", func() bool { return len(events(t, st, "a")) >= 7 })
			if got := events(t, st, "a"); fmt.Sprint(got) != "[1 2 3 4 5 4 5]" {
				t.Errorf("events after the reset = %v, want 4 and 5 again", got)
			}
			if got := events(t, st, "b"); len(got) != 5 {
				t.Errorf("events of b after a's reset = %v, want unchanged", got)
			}
		})
	}
}

// TestFailingWatcherPollIsHealthNotACrash: a poll that fails is retried
// with back-off and shown in the watcher's health; the triggerer keeps
// running its other triggers.
func TestFailingWatcherPollIsHealthNotACrash(t *testing.T) {
	st := engines()["sqlite"](t)
	var polls sync.Map
	reg := builtin.Registry()
	must(t, reg.Register(counter(&polls)))
	svc := service.New(service.Config{Store: st, Triggers: reg})
	watchDag(t, st, "w", watcherOn("down", "mem://down", `{"fail":true}`), watcherOn("up", "mem://up", `{"upto":2}`))
	start(t, st, svc, reg, 0)
	wait.Until(t, 60*time.Second, "the failing poll in health", func() bool {
		w := watcherOf(t, st, "down")
		return w.ErrorsInRow >= 2 && w.LastErrorAt != nil
	})
	if w := watcherOf(t, st, "down"); w.LastError != "asset down: source down" {
		t.Errorf("last error = %q, want the poll's error", w.LastError)
	}
	wait.Until(t, 60*time.Second, "the healthy watcher's events", func() bool { return len(events(t, st, "up")) == 2 })
}

// TestWatcherMovesToTheOtherTriggererAtItsCursor: on PostgreSQL with two
// triggerers, a watcher runs in one at a time; when that one dies it
// resumes in the other from the committed cursor: no number is skipped
// or committed twice.
func TestWatcherMovesToTheOtherTriggererAtItsCursor(t *testing.T) {
	st := engines()["postgres"](t)
	var polls sync.Map
	var mu sync.Mutex
	live, twice := map[int64]int{}, false
	reg := builtin.Registry()
	slow := counter(&polls)
	inner := slow.New
	slow.New = func(raw json.RawMessage) (trigger.Trigger, error) {
		tr, err := inner(raw)
		return runFunc(func(ctx context.Context, rt *trigger.Runtime) error {
			mu.Lock()
			live[rt.ID]++
			twice = twice || live[rt.ID] > 1
			mu.Unlock()
			defer func() { mu.Lock(); live[rt.ID]--; mu.Unlock() }()
			return tr.Run(ctx, rt)
		}), err
	}
	must(t, reg.Register(slow))
	svc := service.New(service.Config{Store: st, Triggers: reg})
	watchDag(t, st, "w", watcherOn("a", "mem://a", `{"upto":100000}`))
	var trs [2]*triggerer.Triggerer
	var stop [2]context.CancelFunc
	trs[0], stop[0] = start(t, st, svc, reg, 0)
	wait.Until(t, 60*time.Second, "the first triggerer to commit", func() bool { return len(events(t, st, "a")) >= 3 })
	trs[1], stop[1] = start(t, st, svc, reg, 0)
	owner := 0
	if watcherOf(t, st, "a").TriggererID == trs[1].ID() {
		owner = 1
	}
	stop[owner]()
	before := len(events(t, st, "a"))
	wait.Until(t, 60*time.Second, "the other triggerer to take over", func() bool {
		return watcherOf(t, st, "a").TriggererID == trs[1-owner].ID() && len(events(t, st, "a")) > before+3
	})
	stop[1-owner]()
	got := events(t, st, "a")
	for i, n := range got {
		if n != i+1 {
			t.Fatalf("event %d is number %d: numbers skipped or repeated across the move (%v)", i, n, got)
		}
	}
	if w := watcherOf(t, st, "a"); string(w.Cursor) != strconv.Itoa(len(got)) {
		t.Errorf("cursor = %s after %d events, want the last committed number", w.Cursor, len(got))
	}
	mu.Lock()
	defer mu.Unlock()
	if twice {
		t.Error("the watcher ran in two triggerers at once")
	}
}

// TestWatcherReadsAndWritesItsAssetState: a watcher reads keys of its
// asset's state and writes them with its batches, recorded as the
// watcher's; a key a task wrote is read back.
func TestWatcherReadsAndWritesItsAssetState(t *testing.T) {
	st := engines()["sqlite"](t)
	reg := builtin.Registry()
	must(t, reg.Register(trigger.Type{Name: "stateful", Uses: trigger.UseWatcher, New: func(json.RawMessage) (trigger.Trigger, error) {
		return runFunc(func(ctx context.Context, rt *trigger.Runtime) error {
			return trigger.Watch(ctx, rt, trigger.WatchOptions{Interval: 20 * time.Millisecond},
				func(ctx context.Context, ws []trigger.Watched) (trigger.Batch, error) {
					a := ws[0].Asset.Name
					raw, err := rt.Watcher.ReadState(ctx, a, "polls")
					if err != nil {
						return trigger.Batch{}, err
					}
					var n int
					_ = json.Unmarshal(raw, &n)
					if n >= 3 {
						return trigger.Batch{}, nil
					}
					seed, err := rt.Watcher.ReadState(ctx, a, "seed")
					if err != nil {
						return trigger.Batch{}, err
					}
					return trigger.Batch{State: map[string]map[string]json.RawMessage{a: {
						"polls": json.RawMessage(strconv.Itoa(n + 1)), "seed_seen": seed}}}, nil
				})
		}), nil
	}}))
	svc := service.New(service.Config{Store: st, Triggers: reg})
	watchDag(t, st, "w", core.Asset{Name: "a", URI: "mem://a", Watchers: []core.AssetWatcher{{Name: "s",
		Trigger: core.TriggerSpec{Type: "stateful"}}}})
	a := watcherOf(t, st, "a")
	must(t, st.StateSet(t.Context(), &store.StateSetParams{Scope: core.AssetScope(a.AssetID), Key: "seed",
		Value: json.RawMessage(`"from a task"`), Now: time.Now(), By: core.UserWriter("admin")}))
	start(t, st, svc, reg, 0)
	wait.Until(t, 60*time.Second, "three polls counted in asset state", func() bool {
		e, err := st.StateGet(t.Context(), core.AssetScope(a.AssetID), "polls")
		return err == nil && string(e.Value) == "3"
	})
	e, _ := st.StateGet(t.Context(), core.AssetScope(a.AssetID), "polls")
	seen, _ := st.StateGet(t.Context(), core.AssetScope(a.AssetID), "seed_seen")
	if e.UpdatedBy.Kind != core.StateWriterWatcher || e.UpdatedBy.Watcher != "s" || seen == nil || string(seen.Value) != `"from a task"` {
		t.Errorf("state = %+v and %+v, want written by watcher s, the seed read back", e, seen)
	}
}
