package dagfile

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// field is a field path: canonical (as Validate names it, tasks[2].retries)
// and as shown to the user (tasks.extract.retries, default_args.retries).
type field struct{ path, disp string }

func (f field) key(k string) field {
	if f.path == "" {
		return field{k, k}
	}
	return field{f.path + "." + k, f.disp + "." + k}
}

func (f field) idx(i int) field {
	return field{fmt.Sprintf("%s[%d]", f.path, i), fmt.Sprintf("%s[%d]", f.disp, i)}
}

// fieldLoc is where a canonical path was found and how to display it.
type fieldLoc struct {
	pos  pos
	disp string
}

// decoder turns the YAML tree of one document into a core.DAG, recording
// each field's position and every problem.
type decoder struct {
	file   string
	probs  []Problem
	locs   map[string]fieldLoc
	budget int // remaining nodes toAny may produce (alias bombs)
}

func (d *decoder) fail(n *node, f field, format string, args ...any) {
	d.probs = append(d.probs, Problem{File: d.file, Line: n.pos.line, Col: n.pos.col, Path: f.disp,
		Msg: fmt.Sprintf(format, args...)})
}

// at records where field f is.
func (d *decoder) at(f field, n *node) {
	if _, ok := d.locs[f.path]; !ok {
		d.locs[f.path] = fieldLoc{pos: n.pos, disp: f.disp}
	}
}

func describe(n *node) string {
	if n.kind != kScalar {
		return n.kind.String()
	}
	switch n.value.(type) {
	case string:
		return fmt.Sprintf("the string %q", n.value)
	case bool:
		return fmt.Sprintf("the boolean %v", n.value)
	}
	return fmt.Sprintf("the number %v", n.value)
}

func (d *decoder) str(n *node, f field) (string, bool) {
	d.at(f, n)
	if s, ok := n.value.(string); ok && n.kind == kScalar {
		return s, true
	}
	d.fail(n, f, "must be a string, not %s", describe(n))
	return "", false
}

func (d *decoder) boolean(n *node, f field) bool {
	d.at(f, n)
	if b, ok := n.value.(bool); ok {
		return b
	}
	d.fail(n, f, "must be true or false, not %s", describe(n))
	return false
}

func asInt(n *node) (int, bool) {
	switch v := n.value.(type) {
	case int64:
		if v >= math.MinInt32 && v <= math.MaxInt32 {
			return int(v), true
		}
	case uint64:
		if v <= math.MaxInt32 {
			return int(v), true
		}
	}
	return 0, false
}

func (d *decoder) integer(n *node, f field) int {
	d.at(f, n)
	if v, ok := asInt(n); ok {
		return v
	}
	d.fail(n, f, "must be an integer, not %s", describe(n))
	return 0
}

// duration accepts a Go duration string ("30s", "5m", "1h30m") or an
// integer number of seconds.
func (d *decoder) duration(n *node, f field) core.Duration {
	d.at(f, n)
	if v, ok := durationOf(n); ok {
		return v
	}
	d.fail(n, f, "must be a duration such as \"30s\", \"5m\" or \"1h30m\", or a number of seconds, not %s", describe(n))
	return 0
}

// durationOf reads a Go duration string or an integer number of seconds.
func durationOf(n *node) (core.Duration, bool) {
	if secs, ok := asInt(n); ok {
		return core.Duration(time.Duration(secs) * time.Second), true
	}
	if s, ok := n.value.(string); ok {
		if v, err := time.ParseDuration(strings.TrimSpace(s)); err == nil {
			return core.Duration(v), true
		}
	}
	return 0, false
}

// strList accepts a string or a list of strings.
func (d *decoder) strList(n *node, f field) []string {
	d.at(f, n)
	if n.kind == kScalar {
		if s, ok := d.str(n, f); ok {
			return []string{s}
		}
		return nil
	}
	if n.kind != kSeq {
		d.fail(n, f, "must be a string or a list of strings, not %s", describe(n))
		return nil
	}
	out := []string{}
	for i, item := range n.items {
		if s, ok := d.str(item, f.idx(i)); ok {
			out = append(out, s)
		}
	}
	return out
}

// stringMap accepts a mapping whose values are scalars (numbers and
// booleans are turned into strings, as environment variables need).
func (d *decoder) stringMap(n *node, f field) map[string]string {
	d.at(f, n)
	if n.kind != kMap {
		d.fail(n, f, "must be a mapping of names to strings, not %s", describe(n))
		return nil
	}
	out := make(map[string]string, len(n.keys))
	for i, k := range n.keys {
		name := k.value.(string)
		v := n.vals[i]
		d.at(f.key(name), v)
		switch v.kind {
		case kScalar:
			out[name] = fmt.Sprint(v.value)
		default:
			d.fail(v, f.key(name), "must be a string, not %s", describe(v))
		}
	}
	return out
}

// maxValueNodes bounds the size of values built from YAML (after aliases
// are expanded), so an alias bomb is an error rather than an outage.
const maxValueNodes = 100000

// toAny converts n to a JSON-compatible value.
func (d *decoder) toAny(n *node, f field) (any, bool) {
	d.at(f, n)
	d.budget--
	if d.budget < 0 {
		if d.budget == -1 {
			d.fail(n, f, "value too large (more than %d elements after expanding aliases)", maxValueNodes)
		}
		return nil, false
	}
	switch n.kind {
	case kScalar:
		return n.value, true
	case kMap:
		m := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			v, ok := d.toAny(n.vals[i], f.key(k.value.(string)))
			if !ok {
				return nil, false
			}
			m[k.value.(string)] = v
		}
		return m, true
	case kSeq:
		s := make([]any, 0, len(n.items))
		for i, item := range n.items {
			v, ok := d.toAny(item, f.idx(i))
			if !ok {
				return nil, false
			}
			s = append(s, v)
		}
		return s, true
	default: // kNull
		return nil, true
	}
}

// date accepts 2024-01-01, 2024-01-01T06:00:00 (both in the DAG's
// timezone) or RFC 3339 with an offset (2024-01-01T06:00:00Z), and returns
// UTC.
func (d *decoder) date(n *node, f field, loc *time.Location) *time.Time {
	s, ok := d.str(n, f)
	if !ok {
		return nil
	}
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		u := t.UTC()
		return &u
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			u := t.UTC()
			return &u
		}
	}
	d.fail(n, f, "must be a date (2024-01-01) or a timestamp (2024-01-01T06:00:00Z), not %q", s)
	return nil
}

// checkKeys reports mapping keys not in allowed, suggesting the closest.
func (d *decoder) checkKeys(n *node, f field, allowed []string) {
	for _, k := range n.keys {
		name := k.value.(string)
		if !contains(allowed, name) {
			d.unknown(k, f.key(name), name, allowed)
		}
	}
}

func (d *decoder) unknown(k *node, f field, name string, allowed []string) {
	if s := didYouMean(name, allowed); s != "" {
		d.fail(k, f, "unknown field%s", s)
		return
	}
	d.fail(k, f, "unknown field; allowed: %s", strings.Join(allowed, ", "))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
