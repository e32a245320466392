package scheduler

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpandArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		values  map[string]string
		max     int
		want    []string
		wantErr string
	}{
		{"list", map[string]string{"x": `[1, "two", {"three": 3}]`}, 10,
			[]string{`{"x":1}`, `{"x":"two"}`, `{"x":{"three":3}}`}, ""},
		{"map gives key/value pairs in document order", map[string]string{"kv": `{"b": 1, "a": [2]}`}, 10,
			[]string{`{"kv":["b",1]}`, `{"kv":["a",[2]]}`}, ""},
		{"cross product, first name varies slowest", map[string]string{"b": `[1, 2]`, "a": `["x", "y"]`}, 10,
			[]string{`{"a":"x","b":1}`, `{"a":"x","b":2}`, `{"a":"y","b":1}`, `{"a":"y","b":2}`}, ""},
		{"empty list gives no instances", map[string]string{"x": `[]`}, 10, nil, ""},
		{"an empty factor empties the product", map[string]string{"x": `[1]`, "y": `{}`}, 10, nil, ""},
		{"string is refused", map[string]string{"x": `"abc"`}, 10, nil, `expand argument "x": cannot map over "abc", a string`},
		{"number is refused", map[string]string{"x": `42`}, 10, nil, "a number"},
		{"null is refused", map[string]string{"x": `null`}, 10, nil, "a null"},
		{"missing value is refused", map[string]string{"x": ``}, 10, nil, "no value to map over"},
		{"too many instances", map[string]string{"x": `[1,2,3]`, "y": `[1,2]`}, 5, nil, "more than 5 instances"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			values := map[string]json.RawMessage{}
			for k, v := range tt.values {
				values[k] = json.RawMessage(v)
			}
			got, err := expandArgs("m", values, tt.max)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), `task "m"`) {
					t.Errorf("error %q does not name the task", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var gotS []string
			for _, g := range got {
				gotS = append(gotS, string(g))
			}
			if diff := cmp.Diff(tt.want, gotS); diff != "" {
				t.Errorf("instances (-want +got):\n%s", diff)
			}
		})
	}
}
