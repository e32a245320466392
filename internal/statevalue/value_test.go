package statevalue_test

import (
	"errors"
	"strings"
	"testing"

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
	}
	for in, want := range good {
		got, err := statevalue.ParseValue([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("ParseValue(%s) = %s, %v; want %s", in, got, err, want)
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
	}
	for in, want := range bad {
		_, err := statevalue.ParseValue([]byte(in))
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseValue(%q) error = %v, want ErrInvalid with %q", in, err, want)
		}
	}
}

// The key rules: not empty, at most 512 characters (runes, not bytes).
func TestCheckKey(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"k", "job/id with spaces", strings.Repeat("é", statevalue.MaxKeyLength)} {
		if err := statevalue.CheckKey(k); err != nil {
			t.Errorf("CheckKey(%.20q...) = %v", k, err)
		}
	}
	for k, want := range map[string]string{"": "must not be empty", strings.Repeat("k", 513): "513 characters long, the limit is 512", "\xff": "UTF-8"} {
		if err := statevalue.CheckKey(k); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckKey(%.20q) = %v, want %q", k, err, want)
		}
	}
}

// FuzzParseValue: whatever is accepted is valid JSON, not null, and stable
// under a second parse.
func FuzzParseValue(f *testing.F) {
	for _, s := range []string{`1`, `{"a":[1,2]}`, `NaN`, `1e999`, `"x"`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := statevalue.ParseValue([]byte(s))
		if err != nil {
			return
		}
		again, err := statevalue.ParseValue(v)
		if err != nil || string(again) != string(v) || string(v) == "null" {
			t.Fatalf("ParseValue(%q) = %s, re-parse %s, %v", s, v, again, err)
		}
	})
}
