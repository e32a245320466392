package statevalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/weirflow/weir/internal/core"
)

// MaxKeyLength is the longest key, in characters (Airflow's column is
// VARCHAR(512)).
const MaxKeyLength = 512

// CheckKey reports whether key is a valid state key: not empty, valid
// UTF-8, at most MaxKeyLength characters. Errors wrap core.ErrInvalid.
func CheckKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("state key must not be empty: %w", core.ErrInvalid)
	case !utf8.ValidString(key):
		return fmt.Errorf("state key %q is not valid UTF-8: %w", key, core.ErrInvalid)
	case utf8.RuneCountInString(key) > MaxKeyLength:
		return fmt.Errorf("state key is %d characters long, the limit is %d: %w",
			utf8.RuneCountInString(key), MaxKeyLength, core.ErrInvalid)
	}
	return nil
}

// ParseValue checks that raw is a storable state value and returns it
// normalized: compact JSON whose numbers keep their exact text, so an
// integer stays an integer and a large integer keeps every digit. Any JSON
// value is storable except null; NaN and ±Infinity (bare tokens, which are
// not JSON, or numbers such as 1e999 that overflow a float64) are rejected.
// Errors wrap core.ErrInvalid and say what is wrong.
func ParseValue(raw []byte) (json.RawMessage, error) {
	raw = bytes.Trim(raw, " \t\r\n") // JSON's white space, no other
	if len(raw) == 0 {
		return nil, fmt.Errorf("a value is required (any JSON value except null): %w", core.ErrInvalid)
	}
	if !json.Valid(raw) {
		if nonFinite(raw) {
			return nil, fmt.Errorf("value contains NaN or Infinity, which JSON cannot represent: %w", core.ErrInvalid)
		}
		var v any
		err := json.Unmarshal(raw, &v)
		return nil, fmt.Errorf("value is not valid JSON (strings need quotes: \"text\"): %v: %w", err, core.ErrInvalid) //nolint:errorlint // the syntax error is detail, not a cause to match
	}
	if string(raw) == "null" {
		return nil, fmt.Errorf("null cannot be stored; delete the key instead: %w", core.ErrInvalid)
	}
	if err := checkNumbers(raw); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("normalize value: %v: %w", err, core.ErrInvalid) //nolint:errorlint // detail
	}
	return buf.Bytes(), nil
}

// nonFinite reports whether invalid JSON text holds a NaN or Infinity token
// outside strings (what Python's json.dumps writes for float('nan')).
func nonFinite(raw []byte) bool {
	inString, escaped := false, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (bytes.HasPrefix(raw[i:], []byte("NaN")) || bytes.HasPrefix(raw[i:], []byte("Infinity"))):
			return true
		}
	}
	return false
}

// checkNumbers rejects numbers that overflow a float64 (1e999 is ±Inf to
// every reader that decodes it as a float).
func checkNumbers(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read value: %v: %w", err, core.ErrInvalid) //nolint:errorlint // detail
		}
		n, ok := tok.(json.Number)
		if !ok {
			continue
		}
		if f, err := strconv.ParseFloat(n.String(), 64); err != nil && math.IsInf(f, 0) {
			return fmt.Errorf("number %s is out of range (it would be Infinity, which JSON cannot represent): %w",
				n, core.ErrInvalid)
		}
	}
}
