package sqlwatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/weirflow/weir/internal/trigger"
)

// lookback is how far below the high-water mark the watcher re-reads for
// rows committed late: a duration (updated is a time) or a number
// (updated is a number).
type lookback struct {
	d    time.Duration
	n    float64
	text string // as written, for errors
}

func parseLookback(raw json.RawMessage) (*lookback, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	v, err := decodeValue(raw)
	if err != nil {
		return nil, trigger.Invalid("lookback", "must be a duration such as \"10m\" or a number")
	}
	switch x := v.(type) {
	case string:
		d, err := time.ParseDuration(x)
		if err != nil || d <= 0 {
			return nil, trigger.Invalid("lookback", "must be a positive duration such as \"10m\" (or a number for a numeric updated column), got %q", x)
		}
		return &lookback{d: d, text: x}, nil
	case json.Number:
		n, err := x.Float64()
		if err != nil || n <= 0 || math.IsInf(n, 0) {
			return nil, trigger.Invalid("lookback", "must be a positive number (or a duration such as \"10m\" for a time column), got %s", x)
		}
		return &lookback{n: n, text: x.String()}, nil
	}
	return nil, trigger.Invalid("lookback", "must be a duration such as \"10m\" or a number, got %s", bytes.TrimSpace(raw))
}

// timeLayouts are the texts of times the watcher understands in an
// updated column: RFC 3339 (how PostgreSQL's timestamps arrive) and the
// forms SQLite's date functions write.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

// parseTime parses s in one of timeLayouts and returns the layout too.
func parseTime(s string) (time.Time, string, bool) {
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, l, true
		}
	}
	return time.Time{}, "", false
}

// from is the start of the window below the high-water mark hw, in hw's
// form (the same text layout for a time, so that SQLite compares the text
// as it compares times).
func (l *lookback) from(hw json.RawMessage) (json.RawMessage, error) {
	v, err := decodeValue(hw)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case string:
		t, layout, ok := parseTime(x)
		if ok && l.d > 0 {
			return encode(t.Add(-l.d).Format(layout)), nil
		}
	case json.Number:
		if l.n > 0 {
			if i, err := x.Int64(); err == nil && l.n == math.Trunc(l.n) {
				return encode(i - int64(l.n)), nil
			}
			f, err := x.Float64()
			if err == nil {
				return encode(f - l.n), nil
			}
		}
	}
	want := "a time (RFC 3339 or YYYY-MM-DD HH:MM:SS text)"
	if l.n > 0 {
		want = "a number"
	}
	return nil, trigger.Permanent(fmt.Errorf("kwarg \"lookback\" is %s, which needs updated_column values that are %s, got %s", l.text, want, abbrev(hw)))
}

// before reports whether the updated value a is before b, as times or
// numbers (false when they are neither, or of different kinds).
func before(a, b json.RawMessage) bool {
	va, err1 := decodeValue(a)
	vb, err2 := decodeValue(b)
	if err1 != nil || err2 != nil {
		return false
	}
	switch x := va.(type) {
	case string:
		y, ok := vb.(string)
		if !ok {
			return false
		}
		ta, _, ok1 := parseTime(x)
		tb, _, ok2 := parseTime(y)
		return ok1 && ok2 && ta.Before(tb)
	case json.Number:
		y, ok := vb.(json.Number)
		if !ok {
			return false
		}
		fa, err1 := x.Float64()
		fb, err2 := y.Float64()
		return err1 == nil && err2 == nil && fa < fb
	}
	return false
}
