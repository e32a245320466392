package sqlwatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/weirflow/weir/internal/trigger"
)

// poll reads the rows past each watched asset's cursor: once for all the
// assets whose cursors are equal (assets that share the trigger from their
// start always are), and each asset gets the rows its route lets through;
// every asset's cursor moves to the last row read for it.
func (w *watcher) poll(ctx context.Context, r *reader, watched []trigger.Watched) (trigger.Batch, error) {
	var (
		b      trigger.Batch
		order  []string
		groups = map[string][]trigger.Watched{}
	)
	for _, wd := range watched {
		k := string(bytes.TrimSpace(wd.Cursor))
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], wd)
	}
	for _, k := range order {
		group := groups[k]
		cur, err := decodeCursor(group[0].Cursor)
		if err != nil {
			return trigger.Batch{}, fmt.Errorf("asset %s: %w", group[0].Asset.Name, err)
		}
		rows, next, err := w.read(ctx, r, cur)
		if err != nil {
			return trigger.Batch{}, fmt.Errorf("sql_incremental on connection %q: %w", w.connID, err)
		}
		for _, a := range group {
			for _, rw := range rows {
				if w.route.Match(a.Asset.Name, trigger.ValueText(rw.payload[w.routeColumn])) {
					b.Events = append(b.Events, trigger.WatchEvent{Asset: a.Asset.Name, Payload: rw.payload, PartitionKey: trigger.ValueText(rw.payload[w.partition])})
				}
			}
			if next != nil {
				if b.Cursors == nil {
					b.Cursors = map[string]json.RawMessage{}
				}
				b.Cursors[a.Asset.Name] = next
			}
		}
	}
	return b, nil
}

// read returns the rows found past cur (nil: from the first row) and the
// cursor that follows them (nil when it stays).
func (w *watcher) read(ctx context.Context, r *reader, cur *cursor) ([]row, json.RawMessage, error) {
	if cur == nil {
		rows, err := r.after(ctx, nil, nil, w.maxItems)
		if err != nil || len(rows) == 0 {
			return nil, nil, err
		}
		next := &cursor{}
		if w.lookback != nil {
			next.Seen = make([]pair, 0, len(rows))
			for _, rw := range rows {
				next.Seen = append(next.Seen, pairOf(rw))
			}
		}
		return w.advance(rows, next)
	}
	hw, err := params(cur.Updated, cur.Key)
	if err != nil {
		return nil, nil, err
	}
	next := &cursor{Updated: cur.Updated, Key: cur.Key, Since: cur.Since, SinceExclusive: cur.SinceExclusive}
	var late []row
	if w.lookback != nil {
		if late, next.Seen, err = w.lateRows(ctx, r, cur, hw); err != nil {
			return nil, nil, err
		}
	}
	var fresh []row
	if budget := w.maxItems - len(late); budget > 0 {
		if fresh, err = r.after(ctx, hw[0], hw[1], budget); err != nil {
			return nil, nil, err
		}
	}
	for _, rw := range fresh {
		if w.lookback != nil {
			next.Seen = append(next.Seen, pairOf(rw))
		}
	}
	if len(fresh) == 0 && w.lookback == nil {
		return nil, nil, nil
	}
	rows, c, err := w.advance(fresh, next)
	if err != nil {
		return nil, nil, err
	}
	if len(late) == 0 && bytes.Equal(c, canonCursor(cur)) {
		return nil, nil, nil // nothing moved
	}
	return append(late, rows...), c, nil
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

// advance moves next's high-water mark to the last of fresh (if any),
// moves its lookback window with it and bounds its seen list; it returns
// fresh and the encoded cursor.
func (w *watcher) advance(fresh []row, next *cursor) ([]row, json.RawMessage, error) {
	if len(fresh) > 0 {
		last := fresh[len(fresh)-1]
		next.Updated, next.Key = encode(last.updated), encode(last.key)
	}
	if w.lookback != nil {
		if len(fresh) > 0 || next.Since == nil {
			since, err := w.lookback.from(next.Updated)
			if err != nil {
				return nil, nil, err
			}
			if next.Since == nil || !next.SinceExclusive || before(next.Since, since) {
				next.Since, next.SinceExclusive = since, false
			}
		}
		var narrowed json.RawMessage
		if next.Seen, narrowed = bound(next.Seen); narrowed != nil && (next.Since == nil || !before(narrowed, next.Since)) {
			next.Since, next.SinceExclusive = narrowed, true
		}
	}
	return fresh, encode(next), nil
}

// canonCursor is cur as advance encodes it.
func canonCursor(cur *cursor) json.RawMessage { return encode(cur) }
