package ui

import (
	"errors"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
)

func TestConfFromForm(t *testing.T) {
	t.Parallel()
	spec := &core.DAG{Params: map[string]any{"name": "world", "limit": uint64(10), "dry": false,
		"regions": []any{"eu"}, "opts": map[string]any{"a": true}, "empty": nil}}
	tests := []struct {
		name    string
		form    url.Values
		want    string
		wantErr string
	}{{
		name: "every kind typed by its default",
		form: url.Values{"param.name": {"Weir"}, "param.limit": {" 2.5 "}, "param.dry": {"true"},
			"param.regions": {`["eu","us"]`}, "param.opts": {`{"a":false}`}, "param.empty": {"null"}},
		want: `{"dry":true,"empty":null,"limit":2.5,"name":"Weir","opts":{"a":false},"regions":["eu","us"]}`,
	}, {
		name: "an unchecked box is false, an emptied text field the empty string",
		form: url.Values{"param.name": {""}, "param.limit": {"1"}, "param.regions": {"[]"}, "param.opts": {"{}"}, "param.empty": {"0"}},
		want: `{"dry":false,"empty":0,"limit":1,"name":"","opts":{},"regions":[]}`,
	}, {
		name:    "values that do not parse are named, all at once",
		form:    url.Values{"param.limit": {"ten"}, "param.regions": {"[eu"}, "param.opts": {"{}"}, "param.empty": {"null"}},
		wantErr: `param "limit" must be a number, not "ten"` + "\n" + `param "regions" must be JSON (a list, a mapping or null): invalid character 'e' looking for beginning of value: invalid input`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := confFromForm(spec, tc.form)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || !errors.Is(err, core.ErrInvalid) {
					t.Fatalf("error = %v\nwant %s (invalid input)", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("conf (-want +got):\n%s", diff)
			}
		})
	}
}
