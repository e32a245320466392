package listwatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/trigger"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// polled is when the tests' polls run unless they say: after their items.
var polled = t0.Add(time.Hour)

// at is an item key modified sec seconds after t0.
func at(key string, sec int) *Item {
	return &Item{Key: key, Modified: t0.Add(time.Duration(sec) * time.Second), Payload: key}
}

func listOf(items ...*Item) ListFunc {
	return func(_ context.Context, emit func(*Item)) error {
		for _, it := range items {
			c := *it
			emit(&c)
		}
		return nil
	}
}

// poller polls a changing listing for assets as the triggerer would,
// committing each batch's cursors, and returns the keys each poll reported
// to each asset.
type poller struct {
	t       *testing.T
	opt     Options
	watched []trigger.Watched
}

func newPoller(t *testing.T, opt Options, assets ...string) *poller {
	p := &poller{t: t, opt: opt}
	for _, a := range assets {
		p.watched = append(p.watched, trigger.Watched{Asset: trigger.AssetInfo{Name: a}})
	}
	return p
}

func (p *poller) poll(now time.Time, items ...*Item) map[string][]string {
	p.t.Helper()
	b, err := Poll(context.Background(), p.watched, p.opt, now, listOf(items...))
	if err != nil {
		p.t.Fatal(err)
	}
	got := map[string][]string{}
	for _, e := range b.Events {
		got[e.Asset] = append(got[e.Asset], e.Payload.(string))
	}
	for i := range p.watched {
		if c, ok := b.Cursors[p.watched[i].Asset.Name]; ok {
			p.watched[i].Cursor = c
		}
	}
	return got
}

func (p *poller) want(now time.Time, want map[string][]string, items ...*Item) {
	p.t.Helper()
	got := p.poll(now, items...)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		p.t.Errorf("poll reported %v, want %v", got, want)
	}
}

// TestEachItemOnceInTimeOrder: the first poll reports everything oldest
// first, the next only what is new or changed (a later time).
func TestEachItemOnceInTimeOrder(t *testing.T) {
	t.Parallel()
	p := newPoller(t, Options{MaxItems: 100}, "a")
	p.want(polled, map[string][]string{"a": {"y", "x"}}, at("x", 2), at("y", 1))
	p.want(polled, map[string][]string{}, at("x", 2), at("y", 1))
	p.want(polled, map[string][]string{"a": {"y", "z"}}, at("x", 2), at("y", 5), at("z", 5))
}

// TestEqualTimesNeverDropAnItem: an item that appears later with the
// cursor's exact time and a key before the last one reported is still
// reported; the ones reported at that time are not again.
func TestEqualTimesNeverDropAnItem(t *testing.T) {
	t.Parallel()
	p := newPoller(t, Options{MaxItems: 100}, "a")
	p.want(polled, map[string][]string{"a": {"m", "z"}}, at("m", 3), at("z", 3))
	p.want(polled, map[string][]string{"a": {"b"}}, at("b", 3), at("m", 3), at("z", 3))
	p.want(polled, map[string][]string{}, at("b", 3), at("m", 3), at("z", 3))
}

// TestABacklogDrainsOverPolls: max_items bounds each poll, taking the
// oldest; the next poll continues, also inside a run of equal times.
func TestABacklogDrainsOverPolls(t *testing.T) {
	t.Parallel()
	var items []*Item
	for i := range 5 {
		items = append(items, at(fmt.Sprintf("k%d", 4-i), i/2))
	}
	// times: k4=0 k3=0 k2=1 k1=1 k0=2
	p := newPoller(t, Options{MaxItems: 3}, "a")
	p.want(polled, map[string][]string{"a": {"k3", "k4", "k1"}}, items...)
	p.want(polled, map[string][]string{"a": {"k2", "k0"}}, items...)
	p.want(polled, map[string][]string{}, items...)
}

// TestRouteGivesEachAssetItsItemsWithItsOwnCursor: one read of the source
// serves every asset; an item matching no route is reported to none; each
// asset's cursor moves on its own.
func TestRouteGivesEachAssetItsItemsWithItsOwnCursor(t *testing.T) {
	t.Parallel()
	p := newPoller(t, Options{MaxItems: 100, Route: map[string]string{"eu": "eu/*", "us": "us/*"}}, "eu", "us", "other")
	p.want(polled, map[string][]string{"eu": {"eu/1"}, "us": {"us/1"}}, at("eu/1", 1), at("us/1", 2), at("asia/1", 3))
	p.want(polled, map[string][]string{"eu": {"eu/2"}}, at("eu/1", 1), at("us/1", 2), at("asia/1", 3), at("eu/2", 1))
	if p.watched[2].Cursor != nil {
		t.Errorf("the asset without a route got cursor %s", p.watched[2].Cursor)
	}
}

// TestWithoutRouteEveryAssetGetsEveryItemFromItsCursor: an asset whose
// cursor an admin reset gets everything again, the other only what is new.
func TestWithoutRouteEveryAssetGetsEveryItemFromItsCursor(t *testing.T) {
	t.Parallel()
	p := newPoller(t, Options{MaxItems: 100}, "a", "b")
	p.want(polled, map[string][]string{"a": {"1"}, "b": {"1"}}, at("1", 1))
	p.watched[1].Cursor = nil
	p.want(polled, map[string][]string{"a": {"2"}, "b": {"1", "2"}}, at("1", 1), at("2", 2))
}

// TestMinAgeWaitsForItemsToSettle: an item modified less than min_age ago
// is reported once it is old enough.
func TestMinAgeWaitsForItemsToSettle(t *testing.T) {
	t.Parallel()
	p := newPoller(t, Options{MaxItems: 100, MinAge: 10 * time.Second}, "a")
	p.want(t0.Add(15*time.Second), map[string][]string{"a": {"old"}}, at("old", 1), at("fresh", 10))
	p.want(t0.Add(20*time.Second), map[string][]string{"a": {"fresh"}}, at("old", 1), at("fresh", 10))
}

// TestAnItemDatedInTheFutureWaitsForItsTime: an item whose time is after
// the poll (a clock ahead, touch -d) is not reported yet, so the cursor
// does not move past the items that come before that time; it is
// reported, once, when its time has come. Without min_age as with it.
func TestAnItemDatedInTheFutureWaitsForItsTime(t *testing.T) {
	t.Parallel()
	for _, minAge := range []time.Duration{0, 10 * time.Second} {
		p := newPoller(t, Options{MaxItems: 100, MinAge: minAge}, "a")
		var ahead []string
		p.opt.Ahead = func(it *Item) { ahead = append(ahead, it.Key) }
		now := t0.Add(time.Minute)
		p.want(now, map[string][]string{"a": {"old"}}, at("old", 1), at("future", 7200))
		p.want(now.Add(time.Minute), map[string][]string{"a": {"later"}}, at("old", 1), at("future", 7200), at("later", 90))
		p.want(t0.Add(7300*time.Second), map[string][]string{"a": {"future"}}, at("old", 1), at("future", 7200), at("later", 90))
		p.want(t0.Add(7400*time.Second), map[string][]string{}, at("old", 1), at("future", 7200), at("later", 90))
		if fmt.Sprint(ahead) != "[future future]" {
			t.Errorf("min_age %s: Ahead was told of %v, want future twice (the two polls before its time)", minAge, ahead)
		}
	}
}

// TestPartitionKeyFromTheItemKey: the first group of the regular
// expression; no match gives no partition key.
func TestPartitionKeyFromTheItemKey(t *testing.T) {
	t.Parallel()
	opt := Options{MaxItems: 100, PartitionKey: regexp.MustCompile(`date=([0-9-]+)/`)}
	b, err := Poll(context.Background(), []trigger.Watched{{Asset: trigger.AssetInfo{Name: "a"}}}, opt, polled,
		listOf(at("date=2026-12-01/x", 1), at("y", 2)))
	if err != nil || len(b.Events) != 2 || b.Events[0].PartitionKey != "2026-12-01" || b.Events[1].PartitionKey != "" {
		t.Errorf("events = %+v (%v), want partition keys 2026-12-01 and none", b.Events, err)
	}
}

// TestAHandWrittenCursor: {"modified", "key"} reports what comes after it
// in (time, key) order; a cursor that is not one is a poll error naming
// the asset.
func TestAHandWrittenCursor(t *testing.T) {
	t.Parallel()
	p := newPoller(t, Options{MaxItems: 100}, "a")
	p.watched[0].Cursor = json.RawMessage(`{"modified":"` + t0.Add(2*time.Second).Format(time.RFC3339) + `","key":"m"}`)
	p.want(polled, map[string][]string{"a": {"n", "c"}}, at("a", 1), at("b", 2), at("n", 2), at("c", 3))

	p.watched[0].Cursor = json.RawMessage(`{"modified":"yesterday"}`)
	_, err := Poll(context.Background(), p.watched, p.opt, polled, listOf())
	if err == nil || !strings.Contains(err.Error(), "asset a: cursor") {
		t.Errorf("a bad cursor gave %v, want an error naming asset a's cursor", err)
	}
}

// TestTooManyTiesFallBackToKeyOrder: keys sharing one time beyond what a
// cursor holds are still each reported once, in key order.
func TestTooManyTiesFallBackToKeyOrder(t *testing.T) {
	t.Parallel()
	var items []*Item
	for i := range 3000 {
		items = append(items, at(fmt.Sprintf("key-%05d-%s", i, strings.Repeat("x", 20)), 1))
	}
	p := newPoller(t, Options{MaxItems: 1000}, "a")
	var all []string
	for range 4 {
		all = append(all, p.poll(polled, items...)["a"]...)
	}
	if len(all) != 3000 || !slices.IsSorted(all) {
		t.Errorf("reported %d items (sorted %v), want each of 3000 once", len(all), slices.IsSorted(all))
	}
	if len(p.watched[0].Cursor) > 64<<10 {
		t.Errorf("the cursor is %d bytes, over the 64 KiB limit", len(p.watched[0].Cursor))
	}
}

// TestAListingErrorIsThePollsError: nothing is committed.
func TestAListingErrorIsThePollsError(t *testing.T) {
	t.Parallel()
	down := errors.New("source down")
	b, err := Poll(context.Background(), []trigger.Watched{{Asset: trigger.AssetInfo{Name: "a"}}}, Options{MaxItems: 1}, polled,
		func(context.Context, func(*Item)) error { return down })
	if !errors.Is(err, down) || !b.Empty() {
		t.Errorf("Poll = %+v, %v; want the listing's error and nothing to commit", b, err)
	}
}

// TestRandomArrivalsAreEachReportedOnce: items arrive between polls with
// times at or after the newest reported to any asset (many equal to it, with keys
// before and after those reported), for two assets routed by key and a
// third that gets everything, with a small max_items; once drained, each
// asset got each of its items exactly once.
func TestRandomArrivalsAreEachReportedOnce(t *testing.T) {
	t.Parallel()
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		opt := Options{MaxItems: 1 + rng.IntN(5)}
		p := newPoller(t, opt, "all")
		routed := newPoller(t, Options{MaxItems: opt.MaxItems, Route: map[string]string{"x": "x*", "y": "y*"}}, "x", "y")
		var items []*Item
		newest := 0
		got := map[string][]string{}
		for step, quiet := 0, false; step < 40 || !quiet; step++ { // 40 steps with arrivals, then until drained
			quiet = true
			if step < 40 {
				for range rng.IntN(6) {
					key := fmt.Sprintf("%c%03d", "xyz"[rng.IntN(3)], rng.IntN(1000))
					if !slices.ContainsFunc(items, func(it *Item) bool { return it.Key == key }) {
						items = append(items, at(key, newest+rng.IntN(2)))
					}
				}
			}
			for _, pp := range []*poller{p, routed} {
				for asset, keys := range pp.poll(polled, items...) {
					got[asset] = append(got[asset], keys...)
					quiet = false
				}
			}
			for _, it := range items {
				reported := slices.Contains(got["all"], it.Key) || slices.Contains(got["x"], it.Key) || slices.Contains(got["y"], it.Key)
				if s := int(it.Modified.Sub(t0) / time.Second); s > newest && reported {
					newest = s
				}
			}
		}
		want := map[string][]string{}
		for _, it := range items {
			want["all"] = append(want["all"], it.Key)
			if k := it.Key[:1]; k != "z" {
				want[k] = append(want[k], it.Key)
			}
		}
		for _, asset := range []string{"all", "x", "y"} {
			g, w := slices.Sorted(slices.Values(got[asset])), slices.Sorted(slices.Values(want[asset]))
			if !slices.Equal(g, w) {
				t.Fatalf("seed %d, asset %s: reported %v, want each of %v once", seed, asset, g, w)
			}
		}
	}
}
