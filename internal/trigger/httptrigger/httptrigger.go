// Package httptrigger holds the http trigger: it polls a URL until the
// answer has an expected status and, when a jq condition is given, the
// JSON body satisfies it (Airflow's HttpSensor). The URL and connection
// handling is the http operator's.
package httptrigger

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/itchyny/gojq"

	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/trigger"
)

// DefaultTimeout bounds one request when the timeout kwarg is not set.
const DefaultTimeout = 30 * time.Second

// Type is the http trigger. kwargs: {"url": "https://host/ready"} or
// {"http_conn_id": "api", "endpoint": "jobs/42"}, with optional method,
// headers, expect_status, json_query, poke_interval and timeout.
var Type = trigger.Type{
	Name:    "http",
	Summary: "polls a URL until it answers an expected status (and a jq condition on its JSON body holds)",
	New:     newTrigger,
}

// httpTrigger is a built http trigger.
type httpTrigger struct {
	Target
	method            string
	expect            []int
	query             *gojq.Code
	interval, timeout time.Duration
}

// kwargs are the http trigger's kwargs as decoded.
type kwargs struct {
	URL          *string           `json:"url"`
	HTTPConnID   *string           `json:"http_conn_id"`
	Endpoint     *string           `json:"endpoint"`
	Method       *string           `json:"method"`
	Headers      map[string]string `json:"headers"`
	ExpectStatus []int             `json:"expect_status"`
	JSONQuery    *string           `json:"json_query"`
	PokeInterval *string           `json:"poke_interval"`
	Timeout      *string           `json:"timeout"`
}

var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}

func newTrigger(raw json.RawMessage) (trigger.Trigger, error) {
	var k kwargs
	if err := trigger.DecodeKwargs(raw, &k); err != nil {
		return nil, err
	}
	t := &httpTrigger{method: http.MethodGet, expect: []int{http.StatusOK}}
	var err error
	if t.Target, err = ParseTarget(k.URL, k.HTTPConnID, k.Endpoint, k.Headers); err != nil {
		return nil, err
	}
	if k.Method != nil {
		t.method = strings.ToUpper(*k.Method)
		if !slices.Contains(methods, t.method) {
			return nil, trigger.Invalid("method", "must be one of %s, got %q", strings.Join(methods, ", "), *k.Method)
		}
	}
	if k.ExpectStatus != nil {
		if len(k.ExpectStatus) == 0 {
			return nil, trigger.Invalid("expect_status", "must list at least one status code")
		}
		for _, c := range k.ExpectStatus {
			if c < 100 || c > 599 {
				return nil, trigger.Invalid("expect_status", "must hold HTTP status codes (100 to 599), got %d", c)
			}
		}
		t.expect = k.ExpectStatus
	}
	if k.JSONQuery != nil {
		q, err := gojq.Parse(*k.JSONQuery)
		if err == nil {
			t.query, err = gojq.Compile(q)
		}
		if err != nil {
			return nil, trigger.Invalid("json_query", "is not a valid jq expression (%v): %q", err, *k.JSONQuery)
		}
	}
	if t.interval, err = trigger.Interval("poke_interval", k.PokeInterval, trigger.DefaultPollInterval); err != nil {
		return nil, err
	}
	if t.timeout, err = trigger.Interval("timeout", k.Timeout, DefaultTimeout); err != nil {
		return nil, err
	}
	return t, nil
}

// Payload is the http trigger's event: the status and the JSON body (the
// text when it is not JSON), or, with json_query, the query's result.
type Payload struct {
	Status int `json:"status"`
	Body   any `json:"body,omitempty"`
	Result any `json:"result,omitempty"`
}

func (t *httpTrigger) Run(ctx context.Context, rt *trigger.Runtime) error {
	client := &http.Client{Timeout: t.timeout}
	return trigger.Poll(ctx, rt, t.interval, func(ctx context.Context) (any, bool, error) {
		return t.check(ctx, rt, client)
	})
}

// check sends one request and tells whether the answer satisfies the trigger.
func (t *httpTrigger) check(ctx context.Context, rt *trigger.Runtime, client *http.Client) (any, bool, error) {
	target, err := t.Resolve(ctx, rt)
	if err != nil {
		return nil, false, err
	}
	req, err := operator.NewHTTPRequest(ctx, t.method, target, nil, t.Headers)
	if err != nil {
		return nil, false, trigger.Permanent(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, false, fmt.Errorf("http %s %s: %w", req.Method, req.URL.Redacted(), err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := operator.ReadHTTPBody(resp)
	if err != nil {
		return nil, false, err
	}
	if !slices.Contains(t.expect, resp.StatusCode) {
		return nil, false, fmt.Errorf("http %s %s answered %s (waiting for %v)", req.Method, req.URL.Redacted(), resp.Status, t.expect)
	}
	var body any = string(data)
	if json.Valid(data) {
		_ = json.Unmarshal(data, &body) // valid JSON decodes
	}
	if t.query == nil {
		return Payload{Status: resp.StatusCode, Body: body}, true, nil
	}
	if !json.Valid(data) {
		return nil, false, fmt.Errorf("http %s %s answered %s with a body that is not JSON, so json_query cannot hold", req.Method, req.URL.Redacted(), resp.Status)
	}
	result, ok, err := t.holds(ctx, body)
	if err != nil || !ok {
		return nil, false, err
	}
	return Payload{Status: resp.StatusCode, Result: result}, true, nil
}

// holds runs the query on body: its first output, when neither null nor
// false (jq's truth), is the result. A query error is reported (and polled
// again: the body may change shape).
func (t *httpTrigger) holds(ctx context.Context, body any) (any, bool, error) {
	v, ok := t.query.RunWithContext(ctx, body).Next()
	if !ok {
		return nil, false, nil
	}
	if err, isErr := v.(error); isErr {
		return nil, false, fmt.Errorf("json_query: %w", err)
	}
	if v == nil || v == false {
		return nil, false, nil
	}
	return v, true, nil
}
