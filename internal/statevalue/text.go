package statevalue

import (
	"fmt"
	"strconv"

	"github.com/weirflow/weir/internal/core"
)

// checkText scans JSON text (valid or not) for what JSON's grammar allows
// but a value must not hold: nesting deeper than MaxDepth, and a \u escape
// of half a UTF-16 surrogate pair, which every decoder turns into U+FFFD.
func checkText(raw []byte) error {
	depth := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '[', '{':
			if depth++; depth > MaxDepth {
				return fmt.Errorf("value nests deeper than %d levels of arrays and objects, the limit: %w", MaxDepth, core.ErrInvalid)
			}
		case ']', '}':
			depth--
		case '"':
			end, err := checkString(raw, i+1)
			if err != nil {
				return err
			}
			i = end
		}
	}
	return nil
}

// checkString checks the string whose text starts at raw[i] and returns
// the offset of its closing quote (or the end of raw).
func checkString(raw []byte, i int) (int, error) {
	for ; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			return i, nil
		case '\\':
			if i+1 < len(raw) && raw[i+1] == 'u' {
				next, err := checkEscape(raw, i)
				if err != nil {
					return 0, err
				}
				i = next
				continue
			}
			i++ // the escaped character
		}
	}
	return i, nil
}

// checkEscape checks the \uXXXX escape at raw[i] (with the low half that
// must follow a high surrogate) and returns the offset of its last byte.
func checkEscape(raw []byte, i int) (int, error) {
	hi, ok := hex4(raw, i+2)
	if !ok {
		return i + 1, nil // not JSON: the syntax check says so
	}
	switch {
	case hi >= 0xDC00 && hi <= 0xDFFF:
		return 0, loneSurrogate(hi, i)
	case hi >= 0xD800 && hi <= 0xDBFF:
		if lo, ok := hex4(raw, i+8); ok && raw[i+6] == '\\' && raw[i+7] == 'u' && lo >= 0xDC00 && lo <= 0xDFFF {
			return i + 11, nil
		}
		return 0, loneSurrogate(hi, i)
	}
	return i + 5, nil
}

func loneSurrogate(r uint64, at int) error {
	return fmt.Errorf("value has the escape \\u%04X at offset %d, half of a UTF-16 surrogate pair, which is not a character: %w",
		r, at, core.ErrInvalid)
}

// hex4 reads the four hex digits at raw[i].
func hex4(raw []byte, i int) (uint64, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(raw[i:i+4]), 16, 16)
	return v, err == nil
}
