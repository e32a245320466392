package httpwatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/itchyny/gojq"

	"github.com/weirflow/weir/internal/trigger"
)

// position is an item's place in cursor order, and the cursor an asset
// keeps: the cursor value, then the id (nil without an id expression).
type position struct {
	Cursor any `json:"cursor"`
	ID     any `json:"id,omitempty"`
}

// item is one selected item and its position.
type item struct {
	value any
	pos   position
}

// decodePosition reads a committed cursor (nil before the first poll).
func decodePosition(raw json.RawMessage) (*position, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var p position
	if err := dec.Decode(&p); err != nil || !scalar(p.Cursor) || (p.ID != nil && !scalar(p.ID)) {
		s := string(raw)
		if len(s) > 80 {
			s = s[:77] + "..."
		}
		return nil, fmt.Errorf("cursor %s is not an http_json cursor: it must be an object {\"cursor\": value, \"id\": value} with a string or number cursor", s)
	}
	return &p, nil
}

// scalar reports whether v can order items: a string or a number.
func scalar(v any) bool {
	switch v.(type) {
	case string, json.Number, float64, int:
		return true
	}
	return false
}

// compare orders two positions: by cursor, then by id (none first).
// Strings that are both RFC 3339 times compare as times; numbers as
// numbers; other strings byte by byte; a string and a number do not
// compare (an error).
func compare(a, b position) (int, error) {
	c, err := compareValues(a.Cursor, b.Cursor)
	if err != nil || c != 0 {
		return c, err
	}
	switch {
	case a.ID == nil && b.ID == nil:
		return 0, nil
	case a.ID == nil:
		return -1, nil
	case b.ID == nil:
		return 1, nil
	}
	return compareValues(a.ID, b.ID)
}

func compareValues(a, b any) (int, error) {
	as, aStr := a.(string)
	bs, bStr := b.(string)
	switch {
	case aStr && bStr:
		ta, err1 := time.Parse(time.RFC3339Nano, as)
		tb, err2 := time.Parse(time.RFC3339Nano, bs)
		if err1 == nil && err2 == nil {
			return ta.Compare(tb), nil
		}
		return strings.Compare(as, bs), nil
	case !aStr && !bStr:
		fa, err1 := number(a)
		fb, err2 := number(b)
		if err1 == nil && err2 == nil {
			switch {
			case fa < fb:
				return -1, nil
			case fa > fb:
				return 1, nil
			}
			return 0, nil
		}
	}
	return 0, fmt.Errorf("cannot order %s and %s: cursor and id values must all be strings or all numbers", encode(a), encode(b))
}

func number(v any) (float64, error) {
	switch x := v.(type) {
	case json.Number:
		return x.Float64()
	case float64:
		return x, nil
	case int:
		return float64(x), nil
	}
	return 0, fmt.Errorf("%v is not a number", v)
}

// render fills a params template from p: {{cursor}} and {{id}} become
// their values as text. A template that needs a value p lacks (there is
// no cursor yet) is left out (false).
func (p *position) render(tmpl string) (string, bool) {
	vals := map[string]any{}
	if p != nil {
		vals["{{cursor}}"], vals["{{id}}"] = p.Cursor, p.ID
	}
	for _, ph := range []string{"{{cursor}}", "{{id}}"} {
		if !strings.Contains(tmpl, ph) {
			continue
		}
		if vals[ph] == nil {
			return "", false
		}
		tmpl = strings.ReplaceAll(tmpl, ph, trigger.ValueText(vals[ph]))
	}
	return tmpl, true
}

func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(fmt.Sprint(v))
	}
	return b
}

// poll asks the endpoint once for every watched asset, from the oldest
// cursor, and gives each asset the items past its own cursor, in cursor
// order, at most max_items of them; each asset's cursor moves to the last
// item it was given (routed to it or not).
func (w *watcher) poll(ctx context.Context, rt *trigger.Runtime, client *http.Client, watched []trigger.Watched) (trigger.Batch, error) {
	curs := make([]*position, len(watched))
	var oldest *position
	for i, wd := range watched {
		p, err := decodePosition(wd.Cursor)
		if err != nil {
			return trigger.Batch{}, fmt.Errorf("asset %s: %w", wd.Asset.Name, err)
		}
		curs[i] = p
		if i == 0 || (oldest != nil && (p == nil || less(*p, *oldest))) {
			oldest = p
		}
	}
	body, err := w.fetch(ctx, rt, client, oldest)
	if err != nil {
		return trigger.Batch{}, err
	}
	items, err := w.selectItems(ctx, rt, body)
	if err != nil {
		return trigger.Batch{}, err
	}
	var b trigger.Batch
	for i, wd := range watched {
		taken, err := after(items, curs[i], w.maxItems)
		if err != nil {
			return trigger.Batch{}, fmt.Errorf("asset %s: %w", wd.Asset.Name, err)
		}
		if len(taken) == 0 {
			continue
		}
		for _, it := range taken {
			ok, err := w.routes(ctx, wd.Asset.Name, it.value)
			if err != nil {
				return trigger.Batch{}, err
			}
			if !ok {
				continue
			}
			pk, err := w.text(ctx, "partition_key", w.partition, it.value)
			if err != nil {
				return trigger.Batch{}, err
			}
			b.Events = append(b.Events, trigger.WatchEvent{Asset: wd.Asset.Name, Payload: it.value, PartitionKey: pk})
		}
		if b.Cursors == nil {
			b.Cursors = map[string]json.RawMessage{}
		}
		b.Cursors[wd.Asset.Name] = encode(taken[len(taken)-1].pos)
	}
	return b, nil
}

// less orders positions, an unorderable pair as equal (the items' own
// comparison reports it).
func less(a, b position) bool {
	c, err := compare(a, b)
	return err == nil && c < 0
}

// after returns up to limit of items (sorted) past cur (all when nil).
func after(items []item, cur *position, limit int) ([]item, error) {
	start := 0
	if cur != nil {
		start = len(items)
		for i, it := range items {
			c, err := compare(it.pos, *cur)
			if err != nil {
				return nil, err
			}
			if c > 0 {
				start = i
				break
			}
		}
	}
	return items[start:min(len(items), start+limit)], nil
}

// selectItems runs the items expression on the answer and each item's cursor
// and id: the items in cursor order, each position once (the first of
// equal ones). An item without a string or number cursor (or id, when id
// is given) is left out, and logged.
func (w *watcher) selectItems(ctx context.Context, rt *trigger.Runtime, body any) ([]item, error) {
	var items []item
	skipped := 0
	iter := w.items.RunWithContext(ctx, body)
	for {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := v.(error); isErr {
			return nil, fmt.Errorf("items: %w", err)
		}
		var pos position
		var err error
		if pos.Cursor, err = w.first(ctx, "cursor", w.cursor, v); err != nil {
			return nil, err
		}
		if w.id != nil {
			if pos.ID, err = w.first(ctx, "id", w.id, v); err != nil {
				return nil, err
			}
		}
		if !scalar(pos.Cursor) || (w.id != nil && !scalar(pos.ID)) {
			skipped++
			continue
		}
		items = append(items, item{value: v, pos: pos})
	}
	if skipped > 0 {
		rt.Logf("%d items without a string or number cursor (or id) were left out", skipped)
	}
	var sortErr error
	slices.SortStableFunc(items, func(a, b item) int {
		c, err := compare(a.pos, b.pos)
		if err != nil && sortErr == nil {
			sortErr = err
		}
		return c
	})
	if sortErr != nil {
		return nil, sortErr
	}
	return slices.CompactFunc(items, func(a, b item) bool { c, _ := compare(a.pos, b.pos); return c == 0 }), nil
}

// first is the first output of code on v (nil when none).
func (w *watcher) first(ctx context.Context, name string, code *gojq.Code, v any) (any, error) {
	out, ok := code.RunWithContext(ctx, v).Next()
	if !ok {
		return nil, nil
	}
	if err, isErr := out.(error); isErr {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// text is code's first output on v as text ("" without code).
func (w *watcher) text(ctx context.Context, name string, code *gojq.Code, v any) (string, error) {
	if code == nil {
		return "", nil
	}
	out, err := w.first(ctx, name, code, v)
	return trigger.ValueText(out), err
}

// routes reports whether asset gets item v (see trigger.Routes).
func (w *watcher) routes(ctx context.Context, asset string, v any) (bool, error) {
	if w.route == nil {
		return true, nil
	}
	s, err := w.text(ctx, "route_field", w.routeBy, v)
	return err == nil && w.route.Match(asset, s), err
}
