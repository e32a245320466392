package scheduler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// DefaultMaxMapLength is the most instances one mapped task may expand to
// (Airflow's [core] max_map_length).
const DefaultMaxMapLength = 1024

// expandArgs computes the map arguments of every instance of a mapped task:
// one JSON object {arg: value} per element of the cross product of its
// expand arguments, in map_index order (arguments sorted by name, the first
// varying slowest). values holds each argument's whole value as JSON: a list
// gives one element per item, an object one [key, value] pair per entry (in
// document order). An empty argument gives no instances; any other JSON value
// is an error naming the argument.
func expandArgs(taskID string, values map[string]json.RawMessage, maxLen int) ([]json.RawMessage, error) {
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names)
	lists := make([][]json.RawMessage, len(names))
	total := 1
	for i, name := range names {
		elems, err := elements(values[name])
		if err != nil {
			return nil, fmt.Errorf("task %q expand argument %q: %w", taskID, name, err)
		}
		lists[i] = elems
		total *= len(elems)
		if total > maxLen {
			return nil, fmt.Errorf("task %q would expand to more than %d instances (max_map_length)", taskID, maxLen)
		}
	}
	if total == 0 {
		return nil, nil
	}
	out := make([]json.RawMessage, 0, total)
	idx := make([]int, len(names))
	for {
		obj := make(map[string]json.RawMessage, len(names))
		for i, name := range names {
			obj[name] = lists[i][idx[i]]
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("task %q: encode map arguments: %w", taskID, err)
		}
		out = append(out, b)
		// Advance the odometer: the last argument varies fastest.
		i := len(idx) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < len(lists[i]) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return out, nil
		}
	}
}

// elements splits a JSON list into its items, or a JSON object into
// [key, value] pairs in document order.
func elements(raw json.RawMessage) ([]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("no value to map over (it must be a JSON list or object)")
	}
	switch trimmed[0] {
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(trimmed, &items); err != nil {
			return nil, fmt.Errorf("invalid JSON list: %w", err)
		}
		return items, nil
	case '{':
		return objectPairs(trimmed)
	}
	return nil, fmt.Errorf("cannot map over %s, a %s: the value must be a JSON list or object",
		abbreviate(trimmed), jsonKind(trimmed[0]))
}

func objectPairs(obj []byte) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, fmt.Errorf("invalid JSON object: %w", err)
	}
	var out []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("invalid JSON object: %w", err)
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, fmt.Errorf("invalid JSON object at key %q: %w", key, err)
		}
		pair, err := json.Marshal([]any{key, val})
		if err != nil {
			return nil, fmt.Errorf("encode pair %q: %w", key, err)
		}
		out = append(out, pair)
	}
	return out, nil
}

func jsonKind(first byte) string {
	switch first {
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func abbreviate(b []byte) string {
	if len(b) > 40 {
		return string(b[:37]) + "..."
	}
	return string(b)
}
