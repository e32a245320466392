package trigger_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/builtin"
)

func TestRegistryRefusesBadSpecsWithTheirProblem(t *testing.T) {
	reg := builtin.Registry()
	cases := []struct {
		spec trigger.Spec
		want string
	}{
		{trigger.Spec{Type: "nope"}, `unknown trigger type "nope" (known: `},
		{trigger.Spec{Type: "timedelta", Kwargs: json.RawMessage(`{}`)}, `kwarg "delta" is required`},
		{trigger.Spec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"-5s"}`)}, `kwarg "delta" must not be negative, got -5s`},
		{trigger.Spec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"soon"}`)}, `kwarg "delta": invalid duration "soon"`},
		{trigger.Spec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"5s","extra":1}`)}, `unknown kwarg "extra"`},
		{trigger.Spec{Type: "timedelta", Kwargs: json.RawMessage(`[1]`)}, `kwargs must be a JSON object`},
		{trigger.Spec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"5s"} x`)}, `unexpected data after the JSON object`},
		{trigger.Spec{Type: "datetime", Kwargs: json.RawMessage(`{"moment":"tomorrow"}`)}, `kwarg "moment" must be an RFC 3339 time such as 2026-12-01T10:00:00Z, got "tomorrow"`},
		{trigger.Spec{Type: "datetime", Kwargs: json.RawMessage(`{"moment":5}`)}, `kwarg "moment" must be a string, got JSON number`},
		// encoding/json would take these as conn_id, url and the last delta.
		{trigger.Spec{Type: "sql", Kwargs: json.RawMessage(`{"CONN_ID":"billing","sql":"select 1"}`)}, `unknown kwarg "CONN_ID" (kwargs are case-sensitive: "conn_id")`},
		{trigger.Spec{Type: "http", Kwargs: json.RawMessage(`{"URL":"http://example.com/"}`)}, `unknown kwarg "URL" (kwargs are case-sensitive: "url")`},
		{trigger.Spec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"5s","delta":"1h"}`)}, `kwarg "delta" is given twice`},
	}
	for _, c := range cases {
		err := reg.Check(c.spec)
		if err == nil || !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%s %s) = %v, want an invalid-input error containing %q", c.spec.Type, c.spec.Kwargs, err, c.want)
		}
	}
	if err := reg.Check(trigger.Spec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"0s"}`)}); err != nil {
		t.Errorf("a zero delta is valid: %v", err)
	}
	if err := reg.Check(trigger.Spec{Type: "http", Kwargs: json.RawMessage(`{"url":"http://example.com/","headers":{"X-Conn_Id":"a","x-conn_id":"b"}}`)}); err != nil {
		t.Errorf("a header map's keys are the caller's: %v", err)
	}
}

func TestRegisterRefusesDuplicatesAndBadNames(t *testing.T) {
	reg := builtin.Registry()
	tp, _ := reg.Lookup("timedelta")
	if err := reg.Register(tp); !errors.Is(err, core.ErrConflict) {
		t.Errorf("registering timedelta twice = %v, want a conflict", err)
	}
	tp.Name = "has space"
	if err := reg.Register(tp); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("registering %q = %v, want invalid", tp.Name, err)
	}
}

// TestTimeDeltaCountsFromCreation: a timedelta trigger that starts (again,
// on another triggerer) after its deadline fires at once with the deadline
// computed from the trigger's creation, not from its start.
func TestTimeDeltaCountsFromCreation(t *testing.T) {
	tr, err := builtin.Registry().New(trigger.Spec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"1h"}`)})
	if err != nil {
		t.Fatal(err)
	}
	created := time.Now().Add(-2 * time.Hour).UTC()
	var got []json.RawMessage
	rt := &trigger.Runtime{CreatedAt: created, EmitFunc: func(_ context.Context, e trigger.Event) error {
		got = append(got, e.Payload)
		return nil
	}}
	if err := tr.Run(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	want := `{"moment":"` + created.Add(time.Hour).Format(time.RFC3339Nano) + `"}`
	if len(got) != 1 || string(got[0]) != want {
		t.Errorf("events = %s, want one %s", got, want)
	}
}

func TestPollRetriesTransientErrorsAndStopsOnPermanentOnes(t *testing.T) {
	var lines strings.Builder
	var events int
	rt := &trigger.Runtime{Log: &lines, EmitFunc: func(context.Context, trigger.Event) error { events++; return nil }}
	calls := 0
	err := trigger.Poll(context.Background(), rt, time.Millisecond, func(context.Context) (any, bool, error) {
		calls++
		if calls < 3 {
			return nil, false, errors.New("connection refused")
		}
		return map[string]int{"calls": calls}, true, nil
	})
	if err != nil || events != 1 || calls != 3 {
		t.Fatalf("Poll = %v after %d calls and %d events, want nil after 3 calls and 1 event", err, calls, events)
	}
	if n := strings.Count(lines.String(), "connection refused"); n != 1 {
		t.Errorf("a repeated error is logged once, got %d times:\n%s", n, lines.String())
	}
	perm := trigger.Permanent(errors.New("no such connection"))
	err = trigger.Poll(context.Background(), rt, time.Millisecond, func(context.Context) (any, bool, error) { return nil, false, perm })
	if err == nil || !strings.Contains(err.Error(), "no such connection") {
		t.Errorf("Poll with a permanent error = %v, want it returned", err)
	}
}

// TestCheckLoadedLeavesTemplatesToTheTry: a DAG's trigger whose kwargs hold
// a template is checked for its type only at load (the rendered kwargs
// are checked when the try starts); without a template it is Check.
func TestCheckLoadedLeavesTemplatesToTheTry(t *testing.T) {
	reg := builtin.Registry()
	cases := []struct {
		spec trigger.Spec
		want string // "" = accepted
	}{
		{trigger.Spec{Type: "datetime", Kwargs: json.RawMessage(`{"moment": "{{ .data_interval_end }}"}`)}, ""},
		{trigger.Spec{Type: "file", Kwargs: json.RawMessage(`{"path": "{{ .params.dir }}/*.csv", "min_size": 1}`)}, ""},
		{trigger.Spec{Type: "http", Kwargs: json.RawMessage(`{"url": "x", "headers": {"A": "{{ .ds }}"}}`)}, ""},
		{trigger.Spec{Type: "no_such_type", Kwargs: json.RawMessage(`{"a": "{{ .ds }}"}`)}, `unknown trigger type "no_such_type"`},
		{trigger.Spec{Type: "file", Kwargs: json.RawMessage(`{"path": "relative/{ x }"}`)}, `kwarg "path" must be absolute`},
		{trigger.Spec{Type: "datetime", Kwargs: json.RawMessage(`{"moment": "tomorrow", "note": "{{"}`)}, ""},
	}
	for _, c := range cases {
		err := reg.CheckLoaded(c.spec)
		if c.want == "" && err != nil {
			t.Errorf("CheckLoaded(%s %s) = %v, want accepted", c.spec.Type, c.spec.Kwargs, err)
		}
		if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckLoaded(%s %s) = %v, want an error containing %q", c.spec.Type, c.spec.Kwargs, err, c.want)
		}
	}
}

// A string kwarg is read as the number or boolean its field wants when it
// is one (a templated kwarg renders to a string); a field that decodes
// itself (a duration) and a string that is no number stay as they are.
func TestKwargsFromTemplatesTakeTheirType(t *testing.T) {
	t.Parallel()
	type kw struct {
		N     int           `json:"n"`
		Ratio *float64      `json:"ratio"`
		On    bool          `json:"on"`
		Every core.Duration `json:"every"`
		Name  string        `json:"name"`
	}
	var got kw
	if err := trigger.DecodeKwargs(json.RawMessage(`{"n": " 5", "ratio": "0.25", "on": "true", "every": "30s", "name": "7"}`), &got); err != nil {
		t.Fatal(err)
	}
	if got.N != 5 || got.Ratio == nil || *got.Ratio != 0.25 || !got.On || got.Every.D() != 30*time.Second || got.Name != "7" {
		t.Errorf("decoded %+v", got)
	}
	err := trigger.DecodeKwargs(json.RawMessage(`{"n": "five"}`), &got)
	if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), `kwarg "n" must be a number, got JSON string`) {
		t.Errorf("a string that is no number: %v", err)
	}
}
