package listwatch

import (
	"container/heap"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/trigger"
)

// MaxEventsPerPoll bounds the events of one poll over every watched asset
// (what the triggerer accepts in one commit).
const MaxEventsPerPoll = 10000

// Item is one thing a listing holds.
type Item struct {
	// Key orders items of equal time and is what route patterns and
	// partition_key match: a path relative to the watched folder, an
	// object key.
	Key      string
	Modified time.Time
	// Payload is the event's extra (a JSON object describing the item).
	Payload any
}

// ListFunc reads the source once, calling emit for each item it holds, in
// any order.
type ListFunc func(ctx context.Context, emit func(*Item)) error

// Options say which items each watched asset gets.
type Options struct {
	// Route maps an asset name to a path.Match pattern over item keys: an
	// asset gets the items its pattern matches, and none when it has no
	// pattern. Nil: every watched asset gets every item.
	Route map[string]string
	// MaxItems bounds the items one poll reports to one asset: the oldest
	// ones, the cursor moving past them only; the rest come next poll.
	MaxItems int
	// MinAge skips items modified less than MinAge ago (half-written).
	// Items dated after the poll (a clock ahead of the triggerer's, a
	// time set by hand) are skipped whatever MinAge is, until their time:
	// reporting one would move the cursor past items still to come.
	MinAge time.Duration
	// Ahead, when set, is called with each item skipped because it is
	// dated after the poll.
	Ahead func(*Item)
	// PartitionKey, when set, gives each event the partition key its first
	// group (or whole match) finds in the item's key; none when no match.
	PartitionKey *regexp.Regexp
}

// Run polls list as a watcher (trigger.Watch) every interval. Items dated
// more than aheadToLog after a poll are logged, once for each change of
// their count or of the soonest: they wait for their time.
func Run(ctx context.Context, rt *trigger.Runtime, interval time.Duration, opt Options, list ListFunc) error {
	var logged string
	return trigger.Watch(ctx, rt, trigger.WatchOptions{Interval: interval}, func(ctx context.Context, watched []trigger.Watched) (trigger.Batch, error) {
		now := rt.Now()
		var ahead aheadItems
		o := opt
		o.Ahead = func(it *Item) { ahead.add(it, now) }
		b, err := Poll(ctx, watched, o, now, list)
		if msg := ahead.String(); err == nil && msg != logged {
			if msg != "" {
				rt.Logf("%s", msg)
			}
			logged = msg
		}
		return b, err
	})
}

// aheadItems counts the items of a poll dated more than aheadToLog after
// it, and keeps the soonest.
type aheadItems struct {
	n       int
	soonest *Item
}

func (a *aheadItems) add(it *Item, now time.Time) {
	if it.Modified.Sub(now) <= aheadToLog {
		return
	}
	a.n++
	if a.soonest == nil || before(it, a.soonest) {
		a.soonest = it
	}
}

// String is the log line for the items ("" for none).
func (a *aheadItems) String() string {
	if a.soonest == nil {
		return ""
	}
	return fmt.Sprintf("%d item(s) dated in the future wait for their time, the soonest %s at %s: a clock ahead of this machine's, or a time set by hand",
		a.n, a.soonest.Key, a.soonest.Modified.Format(time.RFC3339))
}

// aheadToLog is how far after a poll an item's time must be for Run to log
// it (less is the clock skew between machines).
const aheadToLog = time.Minute

// Poll reads list once and returns, for each watched asset, the items its
// route gives it that its cursor does not cover, oldest first (at most
// opt.MaxItems, and MaxEventsPerPoll over all), with the cursor that
// covers them.
func Poll(ctx context.Context, watched []trigger.Watched, opt Options, now time.Time, list ListFunc) (trigger.Batch, error) {
	sels := make([]*selection, 0, len(watched))
	for _, w := range watched {
		c, err := decodeCursor(w.Cursor)
		if err != nil {
			return trigger.Batch{}, fmt.Errorf("asset %s: %w", w.Asset.Name, err)
		}
		pattern, routed := opt.Route[w.Asset.Name]
		if opt.Route != nil && !routed {
			continue
		}
		sels = append(sels, &selection{asset: w.Asset.Name, cursor: c, pattern: pattern, limit: max(opt.MaxItems, 1)})
	}
	if len(sels) == 0 {
		return trigger.Batch{}, nil
	}
	settled := now.Add(-opt.MinAge)
	err := list(ctx, func(it *Item) {
		it.Modified = it.Modified.UTC()
		if it.Modified.After(settled) {
			if opt.Ahead != nil && it.Modified.After(now) {
				opt.Ahead(it)
			}
			return
		}
		for _, s := range sels {
			s.offer(it)
		}
	})
	if err != nil {
		return trigger.Batch{}, err
	}
	var b trigger.Batch
	budget := MaxEventsPerPoll
	for _, s := range sels {
		items := s.oldest(budget)
		if len(items) == 0 {
			continue
		}
		budget -= len(items)
		for _, it := range items {
			b.Events = append(b.Events, trigger.WatchEvent{Asset: s.asset, Payload: it.Payload, PartitionKey: partitionKey(opt.PartitionKey, it.Key)})
		}
		raw, err := json.Marshal(s.cursor.Advance(items))
		if err != nil {
			return trigger.Batch{}, fmt.Errorf("encode the cursor of asset %s: %w", s.asset, err)
		}
		if b.Cursors == nil {
			b.Cursors = map[string]json.RawMessage{}
		}
		b.Cursors[s.asset] = raw
	}
	return b, nil
}

func partitionKey(re *regexp.Regexp, key string) string {
	if re == nil {
		return ""
	}
	m := re.FindStringSubmatch(key)
	switch {
	case m == nil:
		return ""
	case len(m) > 1:
		return m[1]
	}
	return m[0]
}

// selection keeps the limit oldest new items of one asset seen so far (a
// max-heap: its root is the newest kept, dropped when an older one comes),
// so that a poll over a large listing holds at most limit items per asset.
type selection struct {
	asset   string
	cursor  *Cursor
	pattern string
	limit   int
	items   newestFirst
}

func (s *selection) offer(it *Item) {
	if s.pattern != "" {
		if ok, _ := path.Match(s.pattern, it.Key); !ok {
			return
		}
	}
	if s.cursor.Covers(it.Modified, it.Key) {
		return
	}
	if len(s.items) < s.limit {
		heap.Push(&s.items, it)
		return
	}
	if before(it, s.items[0]) {
		s.items[0] = it
		heap.Fix(&s.items, 0)
	}
}

// oldest returns the kept items in (time, key) order, at most n.
func (s *selection) oldest(n int) []*Item {
	out := slices.Clone(s.items)
	slices.SortFunc(out, func(a, b *Item) int {
		if c := a.Modified.Compare(b.Modified); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	return out[:min(n, len(out))]
}

func before(a, b *Item) bool {
	if !a.Modified.Equal(b.Modified) {
		return a.Modified.Before(b.Modified)
	}
	return a.Key < b.Key
}

// newestFirst is a heap.Interface whose root is the newest item.
type newestFirst []*Item

func (h newestFirst) Len() int           { return len(h) }
func (h newestFirst) Less(i, j int) bool { return before(h[j], h[i]) }
func (h newestFirst) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *newestFirst) Push(x any)        { *h = append(*h, x.(*Item)) }
func (h *newestFirst) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
