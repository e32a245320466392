package sqlwatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// cursor is one asset's committed position: the high-water mark (the
// updated and key values of the last row read, in cursor order) and, with
// a lookback, the window below it whose rows were already recorded.
type cursor struct {
	Updated json.RawMessage `json:"updated"`
	Key     json.RawMessage `json:"key"`
	// Since starts the lookback window (inclusive, or exclusive when
	// SinceExclusive is set: the window was narrowed to bound Seen).
	Since          json.RawMessage `json:"since,omitempty"`
	SinceExclusive bool            `json:"since_exclusive,omitempty"`
	// Seen lists the [updated, key] pairs of the window's rows already
	// recorded, in cursor order.
	Seen []pair `json:"seen,omitempty"`
}

// pair is a row's [updated, key] in canonical JSON.
type pair [2]json.RawMessage

// id is the pair as a set key.
func (p pair) id() string { return string(p[0]) + "\x00" + string(p[1]) }

// Bounds of the keys a cursor keeps for its lookback window, so that it
// stays well within the 64 KiB cursor limit.
const (
	maxSeen      = 1000
	maxSeenBytes = 32 << 10
)

// decodeCursor reads a committed cursor (nil before the first poll).
func decodeCursor(raw json.RawMessage) (*cursor, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var c cursor
	bad := func() error {
		return fmt.Errorf("cursor %s is not a sql_incremental cursor: it must be an object {\"updated\": value, \"key\": value} (both not null)", abbrev(raw))
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, bad()
	}
	if isNull(c.Updated) || isNull(c.Key) {
		return nil, bad()
	}
	var err error
	if c.Updated, err = canonRaw(c.Updated); err != nil {
		return nil, bad()
	}
	if c.Key, err = canonRaw(c.Key); err != nil {
		return nil, bad()
	}
	if c.Since != nil {
		if c.Since, err = canonRaw(c.Since); err != nil {
			return nil, bad()
		}
	}
	for i, p := range c.Seen {
		for j := range p {
			if c.Seen[i][j], err = canonRaw(p[j]); err != nil {
				return nil, bad()
			}
		}
	}
	return &c, nil
}

func isNull(raw json.RawMessage) bool {
	s := string(bytes.TrimSpace(raw))
	return s == "" || s == "null"
}

func abbrev(raw json.RawMessage) string {
	s := string(raw)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// encode is a value's canonical JSON: no HTML escaping, no spaces, so
// that a value read from a row and one decoded from a stored cursor (which
// the database may have reformatted) compare equal.
func encode(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage(fmt.Sprintf("%q", fmt.Sprint(v))) // driver values always encode; never reached
	}
	return json.RawMessage(bytes.TrimSpace(b.Bytes()))
}

// canonRaw re-encodes raw canonically.
func canonRaw(raw json.RawMessage) (json.RawMessage, error) {
	v, err := decodeValue(raw)
	if err != nil {
		return nil, err
	}
	return encode(v), nil
}

// decodeValue decodes one JSON value keeping numbers as json.Number.
func decodeValue(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// param is a cursor value as a statement parameter: a string, an integer,
// a float or a bool, as the driver read it.
func param(raw json.RawMessage) (any, error) {
	v, err := decodeValue(raw)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil && !strings.ContainsAny(x.String(), ".eE") {
			return i, nil
		}
		return x.Float64()
	case string, bool:
		return x, nil
	}
	return nil, errors.New("a cursor value must be a string, a number or a boolean")
}

// params decodes the values of raws as statement parameters.
func params(raws ...json.RawMessage) ([]any, error) {
	out := make([]any, len(raws))
	for i, raw := range raws {
		v, err := param(raw)
		if err != nil {
			return nil, fmt.Errorf("cursor value %s: %w", abbrev(raw), err)
		}
		out[i] = v
	}
	return out, nil
}

// pairOf is a row's cursor pair.
func pairOf(r row) pair { return pair{encode(r.updated), encode(r.key)} }

// bound keeps the newest entries of seen (in cursor order) within
// maxSeen and maxSeenBytes. When entries must go, every entry sharing the
// updated value of the last one dropped goes too, and the window then
// starts after that value (exclusive), so that no recorded row is taken
// for a late one.
func bound(seen []pair) (kept []pair, since json.RawMessage) {
	size, keep := 0, 0
	for i := len(seen) - 1; i >= 0; i-- {
		size += len(seen[i][0]) + len(seen[i][1]) + 6
		if keep == maxSeen || size > maxSeenBytes {
			break
		}
		keep++
	}
	if keep == len(seen) {
		return seen, nil
	}
	cut := len(seen) - keep
	boundary := seen[cut-1][0]
	for cut < len(seen) && bytes.Equal(seen[cut][0], boundary) {
		cut++
	}
	return seen[cut:], boundary
}
