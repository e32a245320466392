package statevalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/weirflow/weir/internal/core"
)

// MaxKeyLength is the longest key, in characters (Airflow's column is
// VARCHAR(512)).
const MaxKeyLength = 512

// MaxDepth is the deepest nesting of arrays and objects a value may have
// (encoding/json's own limit, so every stored value decodes in Go).
const MaxDepth = 10000

// CheckKey reports whether key is a valid state key: not empty, valid
// UTF-8 without control characters (NUL, newline, DEL, ...), at most
// MaxKeyLength characters, and not "." or ".." (which no URL path can
// carry: clients and proxies resolve them as path segments). Errors wrap
// core.ErrInvalid.
func CheckKey(key string) error {
	switch key {
	case "":
		return fmt.Errorf("state key must not be empty: %w", core.ErrInvalid)
	case ".", "..":
		return fmt.Errorf("state key %q is not allowed: \".\" and \"..\" are path segments, not names: %w", key, core.ErrInvalid)
	}
	if err := CheckUTF8("state key", []byte(key)); err != nil {
		return err
	}
	for i, r := range key {
		if unicode.IsControl(r) {
			return fmt.Errorf("state key %q has the control character %U at byte %d; keys are printable text: %w",
				key, r, i, core.ErrInvalid)
		}
	}
	if n := utf8.RuneCountInString(key); n > MaxKeyLength {
		return fmt.Errorf("state key is %d characters long, the limit is %d: %w", n, MaxKeyLength, core.ErrInvalid)
	}
	return nil
}

// CheckUTF8 reports whether b is valid UTF-8, naming what b is and the
// offset of the first bad byte otherwise. Errors wrap core.ErrInvalid.
// Nothing invalid is stored: a reader would get U+FFFD instead.
func CheckUTF8(what string, b []byte) error {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return fmt.Errorf("%s is not valid UTF-8 (byte 0x%02x at offset %d): %w", what, b[i], i, core.ErrInvalid)
		}
		i += size
	}
	return nil
}

// ParseValue checks that raw is a storable state value and returns it
// normalized: compact JSON whose numbers keep their exact text, so an
// integer stays an integer and a large integer keeps every digit. Any JSON
// value is storable except null; NaN and ±Infinity (bare tokens, which are
// not JSON, or numbers such as 1e999 that overflow a float64) are
// rejected, and so are text that is not UTF-8 (or a "\uD800" escape of
// half a surrogate pair, which decodes to U+FFFD) and nesting deeper than
// MaxDepth. Errors wrap core.ErrInvalid and say what is wrong.
func ParseValue(raw []byte) (json.RawMessage, error) {
	raw = bytes.Trim(raw, " \t\r\n") // JSON's white space, no other
	if len(raw) == 0 {
		return nil, fmt.Errorf("a value is required (any JSON value except null): %w", core.ErrInvalid)
	}
	if err := CheckUTF8("value", raw); err != nil {
		return nil, err
	}
	if err := Explain(raw); err != nil {
		return nil, err
	}
	if !json.Valid(raw) {
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

// Explain returns what is wrong with JSON text where a JSON decoder's
// error would mislead: NaN or Infinity, nesting deeper than MaxDepth, or
// an escape of half a surrogate pair (valid JSON, but not text). It
// returns nil for anything else, valid or not. Errors wrap core.ErrInvalid.
func Explain(raw []byte) error {
	if err := checkText(raw); err != nil {
		return err
	}
	if !json.Valid(raw) && nonFinite(raw) {
		return fmt.Errorf("value contains NaN or Infinity, which JSON cannot represent: %w", core.ErrInvalid)
	}
	return nil
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
