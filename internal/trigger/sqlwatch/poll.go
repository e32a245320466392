package sqlwatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/weirflow/weir/internal/trigger"
)

// group is the watched assets that share one committed cursor, and what
// the poll found for them.
type group struct {
	assets []trigger.Watched
	cur    *cursor // nil before the first poll
	hw     []any   // cur's (updated, key) as parameters; nil with cur
	late   []row   // rows of the lookback window not seen before
	next   *cursor
}

// poll reads the rows past the watched assets' cursors in one statement,
// from the oldest cursor (plus, with a lookback, one window statement per
// distinct cursor); each asset gets the rows past its own cursor that its
// route lets through, and its cursor moves to the last of them.
func (w *watcher) poll(ctx context.Context, r *reader, watched []trigger.Watched) (trigger.Batch, error) {
	groups, err := groupByCursor(watched)
	if err != nil {
		return trigger.Batch{}, err
	}
	maxLate := 0
	for _, g := range groups {
		if g.next, err = w.window(ctx, r, g); err != nil {
			return trigger.Batch{}, w.wrap(err)
		}
		maxLate = max(maxLate, len(g.late))
	}
	var fresh []row
	if budget := w.maxItems - maxLate; budget > 0 {
		from := make([][]any, len(groups))
		for i, g := range groups {
			from[i] = g.hw
		}
		if fresh, err = r.after(ctx, from, budget); err != nil {
			return trigger.Batch{}, w.wrap(err)
		}
	}
	var b trigger.Batch
	for i, g := range groups {
		var mine []row
		for _, rw := range fresh {
			if rw.past[i] {
				mine = append(mine, rw)
			}
		}
		next, err := w.advance(g, mine)
		if err != nil {
			return trigger.Batch{}, w.wrap(err)
		}
		if next == nil {
			continue
		}
		for _, a := range g.assets {
			for _, rw := range append(g.late[:len(g.late):len(g.late)], mine...) {
				if w.route.Match(a.Asset.Name, trigger.ValueText(rw.payload[w.routeColumn])) {
					b.Events = append(b.Events, trigger.WatchEvent{Asset: a.Asset.Name, Payload: rw.payload, PartitionKey: trigger.ValueText(rw.payload[w.partition])})
				}
			}
			if b.Cursors == nil {
				b.Cursors = map[string]json.RawMessage{}
			}
			b.Cursors[a.Asset.Name] = next
		}
	}
	return b, nil
}

func (w *watcher) wrap(err error) error {
	return fmt.Errorf("sql_incremental on connection %q: %w", w.connID, err)
}

// groupByCursor groups the watched assets by committed cursor, in the
// order they come.
func groupByCursor(watched []trigger.Watched) ([]*group, error) {
	var groups []*group
	byCursor := map[string]*group{}
	for _, wd := range watched {
		k := string(bytes.TrimSpace(wd.Cursor))
		if g, ok := byCursor[k]; ok {
			g.assets = append(g.assets, wd)
			continue
		}
		cur, err := decodeCursor(wd.Cursor)
		if err != nil {
			return nil, fmt.Errorf("asset %s: %w", wd.Asset.Name, err)
		}
		g := &group{assets: []trigger.Watched{wd}, cur: cur}
		if cur != nil {
			if g.hw, err = params(cur.Updated, cur.Key); err != nil {
				return nil, fmt.Errorf("asset %s: %w", wd.Asset.Name, err)
			}
		}
		byCursor[k] = g
		groups = append(groups, g)
	}
	return groups, nil
}

// window starts g's next cursor from its committed one and, with a
// lookback, reads the rows of its window below the high-water mark into
// g.late.
func (w *watcher) window(ctx context.Context, r *reader, g *group) (*cursor, error) {
	if g.cur == nil {
		return &cursor{}, nil
	}
	next := &cursor{Updated: g.cur.Updated, Key: g.cur.Key, Since: g.cur.Since, SinceExclusive: g.cur.SinceExclusive}
	if w.lookback != nil {
		var err error
		if g.late, next.Seen, err = w.lateRows(ctx, r, g.cur, g.hw); err != nil {
			return nil, err
		}
	}
	return next, nil
}

// advance moves g.next past mine (the rows past g's cursor, in order) and
// returns it encoded, or nil when g's cursor stays as it is.
func (w *watcher) advance(g *group, mine []row) (json.RawMessage, error) {
	next := g.next
	if len(mine) == 0 && (w.lookback == nil || g.cur == nil) {
		return nil, nil
	}
	if len(mine) > 0 {
		last := mine[len(mine)-1]
		next.Updated, next.Key = encode(last.updated), encode(last.key)
	}
	if w.lookback != nil {
		for _, rw := range mine {
			next.Seen = append(next.Seen, pairOf(rw))
		}
		if err := w.slide(next, len(mine) > 0); err != nil {
			return nil, err
		}
	}
	c := encode(next)
	if len(g.late) == 0 && len(mine) == 0 && bytes.Equal(c, encode(g.cur)) {
		return nil, nil // nothing moved
	}
	return c, nil
}

// slide moves next's lookback window up to below its new high-water mark
// (moved says the mark moved) and bounds its seen list.
func (w *watcher) slide(next *cursor, moved bool) error {
	if moved || next.Since == nil {
		since, err := w.lookback.from(next.Updated)
		if err != nil {
			return err
		}
		if next.Since == nil || !next.SinceExclusive || before(next.Since, since) {
			next.Since, next.SinceExclusive = since, false
		}
	}
	var narrowed json.RawMessage
	if next.Seen, narrowed = bound(next.Seen); narrowed != nil && (next.Since == nil || !before(narrowed, next.Since)) {
		next.Since, next.SinceExclusive = narrowed, true
	}
	return nil
}

// lateRows reads the lookback window below the high-water mark: rows not
// in cur.Seen are late (up to max_items), and the seen list that follows
// keeps the window's rows in cursor order. A cursor without a window yet
// (set by an admin, or written without a lookback) counts every row of the
// window as seen.
func (w *watcher) lateRows(ctx context.Context, r *reader, cur *cursor, hw []any) ([]row, []pair, error) {
	since, exclusive := cur.Since, cur.SinceExclusive
	adopt := since == nil
	if adopt {
		var err error
		if since, err = w.lookback.from(cur.Updated); err != nil {
			return nil, nil, err
		}
	}
	s, err := param(since)
	if err != nil {
		return nil, nil, fmt.Errorf("cursor value %s: %w", abbrev(since), err)
	}
	limit := maxSeen + w.maxItems
	rows, err := r.window(ctx, s, exclusive, hw[0], hw[1], limit)
	if err != nil {
		return nil, nil, err
	}
	old := make(map[string]bool, len(cur.Seen))
	for _, p := range cur.Seen {
		old[p.id()] = true
	}
	var late []row
	seen := make([]pair, 0, len(rows))
	matched := map[string]bool{}
	complete := len(rows) < limit
	for _, rw := range rows {
		p := pairOf(rw)
		switch {
		case adopt || old[p.id()]:
			matched[p.id()] = true
		case len(late) < w.maxItems:
			late = append(late, rw)
		default:
			complete = false // the rest waits for the next poll
			continue
		}
		seen = append(seen, p)
	}
	if !complete { // entries of rows not read this time stay
		for _, p := range cur.Seen {
			if !matched[p.id()] {
				seen = append(seen, p)
			}
		}
	}
	return late, seen, nil
}
