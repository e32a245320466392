package statevalue_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statevalue"
)

// docs/requirements.md#ts-3 (values): any JSON value but null is stored, normalized with its
// numbers' exact text; null, NaN and ±Inf are refused with a clear error.
func TestParseValue(t *testing.T) {
	t.Parallel()
	good := map[string]string{
		`42`:                      `42`,
		` 9007199254740993 `:      `9007199254740993`,
		`1.0`:                     `1.0`,
		`-0.5e-3`:                 `-0.5e-3`,
		`"NaN"`:                   `"NaN"`,
		`{ "a" : [1, null, {}] }`: `{"a":[1,null,{}]}`,
		`[ ]`:                     `[]`,
		`false`:                   `false`,
		`"Infinity \" NaN"`:       `"Infinity \" NaN"`,
		`"\ud83d\ude00 \u00e9"`:   `"\ud83d\ude00 \u00e9"`,
		`"[[[\\"`:                 `"[[[\\"`,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000): strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	}
	for in, want := range good {
		got, err := statevalue.ParseValue([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("ParseValue(%.40s) = %.40s, %v; want %.40s", in, got, err, want)
		}
	}
	bad := map[string]string{
		``:                  "a value is required",
		`null`:              "null cannot be stored",
		` null `:            "null cannot be stored",
		`NaN`:               "NaN or Infinity",
		`{"x": NaN}`:        "NaN or Infinity",
		`[-Infinity]`:       "NaN or Infinity",
		`1e999`:             "out of range",
		`{"deep":[-1e400]}`: "out of range",
		`hello`:             "not valid JSON",
		`{"a":1`:            "not valid JSON",
		// Issue 13 finding 6: nothing is silently turned into U+FFFD, and
		// the depth limit is named as such.
		"\"caf\xe9\"":        `value is not valid UTF-8 (byte 0xe9 at offset 4)`,
		"[\"ok\", \"\xff\"]": `value is not valid UTF-8 (byte 0xff at offset 8)`,
		`"\ud800"`:           `the escape \uD800 at offset 1, half of a UTF-16 surrogate pair`,
		`{"k": "a\udc00"}`:   `the escape \uDC00 at offset 8`,
		`"\ud83d\u0041"`:     `the escape \uD83D at offset 1`,
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001): "value nests deeper than 10000 levels of arrays and objects, the limit",
	}
	for in, want := range bad {
		_, err := statevalue.ParseValue([]byte(in))
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseValue(%q) error = %v, want ErrInvalid with %q", in, err, want)
		}
	}
}

// The key rules: not empty, at most 512 characters (runes, not bytes),
// valid UTF-8 without control characters, not "." or ".." (issue 13
// finding 6: the API stored them, and no CLI could reach "." or "..").
func TestCheckKey(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"k", "job/id with spaces", strings.Repeat("é", statevalue.MaxKeyLength), "...", ".hidden", "a..b", "日本 ✓"} {
		if err := statevalue.CheckKey(k); err != nil {
			t.Errorf("CheckKey(%.20q...) = %v", k, err)
		}
	}
	for k, want := range map[string]string{
		"":                       "must not be empty",
		strings.Repeat("k", 513): "513 characters long, the limit is 512",
		"\xff":                   `state key is not valid UTF-8 (byte 0xff at offset 0)`,
		"a\x00b":                 `state key "a\x00b" has the control character U+0000 at byte 1; keys are printable text`,
		"line\n":                 "control character U+000A",
		"tab\t":                  "control character U+0009",
		"del\x7f":                "control character U+007F",
		"c1\u0085":               "control character U+0085",
		".":                      `state key "." is not allowed: "." and ".." are path segments, not names`,
		"..":                     `state key ".." is not allowed`,
	} {
		if err := statevalue.CheckKey(k); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckKey(%.20q) = %v, want %q", k, err, want)
		}
	}
}

// FuzzParseValue: whatever is accepted is valid JSON, not null, and stable
// under a second parse.
func FuzzParseValue(f *testing.F) {
	for _, s := range []string{`1`, `{"a":[1,2]}`, `NaN`, `1e999`, `"x"`, `null`, "\"\xff\"", `"\ud800"`, `"\ud83d\ude00"`, `[[[[]]]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := statevalue.ParseValue([]byte(s))
		if err != nil {
			return
		}
		again, err := statevalue.ParseValue(v)
		if err != nil || string(again) != string(v) || string(v) == "null" || !utf8.Valid(v) {
			t.Fatalf("ParseValue(%q) = %s, re-parse %s, %v", s, v, again, err)
		}
	})
}
