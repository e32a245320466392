// Package listwatch holds what the watchers of a listing share (the
// directory and s3_keys types): a source listed whole at each poll, because
// it cannot filter by time, whose items each have a key (a relative path,
// an object key) and a modification time; a cursor over (time, key) that
// never drops an item whose time equals the cursor's; and the selection,
// routing and bounding of each watched asset's new items in one read.
package listwatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// MaxTiedKeyBytes bounds the keys a cursor remembers at its exact time
// (the cursor is at most 64 KiB); past it the cursor keeps only the last
// key at that time, and ties are decided by key order (see Cursor).
const MaxTiedKeyBytes = 32 << 10

// Cursor is a listing watcher's cursor, kept as asset state: every item
// modified before Modified was reported, and so was every item modified
// exactly at Modified whose key is in Keys. Keys is empty when the cursor
// was written by hand ({"modified": ..., "key": ...}) or when more keys
// share that time than MaxTiedKeyBytes holds: then the items at Modified
// with a key up to Key count as reported.
type Cursor struct {
	Modified time.Time `json:"modified"`
	Key      string    `json:"key,omitempty"`
	Keys     []string  `json:"keys,omitempty"`
}

// decodeCursor reads a committed cursor (nil: none yet, every item is new).
func decodeCursor(raw json.RawMessage) (*Cursor, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var c Cursor
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf(`cursor %s is not {"modified": "<RFC 3339 time>", "key": "...", "keys": [...]}: %w`, raw, err)
	}
	c.Modified = c.Modified.UTC()
	if !slices.IsSorted(c.Keys) {
		c.Keys = slices.Clone(c.Keys)
		slices.Sort(c.Keys)
	}
	return &c, nil
}

// CheckCursor reports why raw, an admin's cursor, is not a listing
// watcher's, or nil (trigger.Type.CheckCursor): stricter than a poll's
// read, it wants "modified" and no member a cursor does not have.
func CheckCursor(raw json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var c Cursor
	if err := dec.Decode(&c); err != nil || c.Modified.IsZero() {
		return fmt.Errorf(`cursor %s is not {"modified": "<RFC 3339 time>", "key": "...", "keys": [...]} with "modified" set`, raw)
	}
	return nil
}

// Covers reports whether the item (modified, key) was reported before c.
func (c *Cursor) Covers(modified time.Time, key string) bool {
	switch {
	case c == nil || modified.After(c.Modified):
		return false
	case modified.Before(c.Modified):
		return true
	case len(c.Keys) > 0:
		_, found := slices.BinarySearch(c.Keys, key)
		return found
	}
	return key <= c.Key
}

// Advance returns the cursor after items (newer than c, in (time, key)
// order) are reported; c is not changed.
func (c *Cursor) Advance(items []*Item) *Cursor {
	next := &Cursor{}
	if c != nil {
		next = &Cursor{Modified: c.Modified, Key: c.Key, Keys: slices.Clone(c.Keys)}
	}
	size := 0
	for _, k := range next.Keys {
		size += len(k) + 4
	}
	for _, it := range items {
		if it.Modified.After(next.Modified) {
			next.Modified, next.Key, next.Keys, size = it.Modified, "", []string{}, 0
		}
		next.Key = max(next.Key, it.Key)
		if next.Keys == nil { // ties by key order already: nothing to remember
			continue
		}
		if i, found := slices.BinarySearch(next.Keys, it.Key); !found {
			next.Keys = slices.Insert(next.Keys, i, it.Key)
			size += len(it.Key) + 4
		}
		if size > MaxTiedKeyBytes {
			next.Keys = nil
		}
	}
	if len(next.Keys) == 0 {
		next.Keys = nil
	}
	return next
}
