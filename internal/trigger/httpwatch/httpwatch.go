// Package httpwatch holds the http_json watcher: it polls a JSON endpoint,
// selects items and each item's cursor value (and tie-breaker id) with jq
// expressions (gojq), and records an asset event for each item past the
// asset's cursor (docs/watchers.md).
package httpwatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/itchyny/gojq"

	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/httptrigger"
)

// DefaultMaxItems bounds the items one poll records per asset when
// max_items is not set.
const DefaultMaxItems = 1000

// Type is the http_json watcher. kwargs: {"url": "https://api/orders",
// "items": ".data[]", "cursor": ".updated_at", "id": ".id"} (or
// http_conn_id with endpoint), with optional headers, params,
// partition_key, route_field and route, max_items, poll_interval and
// timeout.
var Type = trigger.Type{
	Name:        "http_json",
	Summary:     "polls a JSON endpoint and records the items (selected with jq) whose cursor field passed the asset's cursor",
	New:         newWatcher,
	Uses:        trigger.UseWatcher,
	CheckCursor: func(raw json.RawMessage) error { _, err := decodePosition(raw); return err },
}

// watcher is a built http_json trigger.
type watcher struct {
	httptrigger.Target
	params             map[string]string // query parameter -> template with {{cursor}}, {{id}}
	items, cursor, id  *gojq.Code        // id nil = no tie-breaker
	partition, routeBy *gojq.Code        // nil = none
	route              trigger.Routes    // on the route_field text
	maxItems           int
	interval, timeout  time.Duration
}

// kwargs are the http_json kwargs as decoded.
type kwargs struct {
	URL          *string           `json:"url"`
	HTTPConnID   *string           `json:"http_conn_id"`
	Endpoint     *string           `json:"endpoint"`
	Headers      map[string]string `json:"headers"`
	Params       map[string]string `json:"params"`
	Items        *string           `json:"items"`
	Cursor       *string           `json:"cursor"`
	ID           *string           `json:"id"`
	PartitionKey *string           `json:"partition_key"`
	RouteField   *string           `json:"route_field"`
	Route        map[string]string `json:"route"`
	MaxItems     *int              `json:"max_items"`
	PollInterval *string           `json:"poll_interval"`
	Timeout      *string           `json:"timeout"`
}

func newWatcher(raw json.RawMessage) (trigger.Trigger, error) {
	var k kwargs
	if err := trigger.DecodeKwargs(raw, &k); err != nil {
		return nil, err
	}
	w := &watcher{maxItems: DefaultMaxItems, params: k.Params}
	var err error
	if w.Target, err = httptrigger.ParseTarget(k.URL, k.HTTPConnID, k.Endpoint, k.Headers); err != nil {
		return nil, err
	}
	for _, q := range []struct {
		name     string
		expr     *string
		required string
		out      **gojq.Code
	}{
		{"items", k.Items, "the items of the answer, e.g. \".data[]\"", &w.items},
		{"cursor", k.Cursor, "an item's cursor value, e.g. \".updated_at\"", &w.cursor},
		{"id", k.ID, "", &w.id},
		{"partition_key", k.PartitionKey, "", &w.partition},
		{"route_field", k.RouteField, "", &w.routeBy},
	} {
		if *q.out, err = compile(q.name, q.expr, q.required); err != nil {
			return nil, err
		}
	}
	for name := range k.Params {
		if name == "" {
			return nil, trigger.Invalid("params", "holds an empty parameter name")
		}
	}
	if w.route, err = trigger.ParseRoutes(k.Route, "route_field", w.routeBy != nil); err != nil {
		return nil, err
	}
	if k.MaxItems != nil {
		if *k.MaxItems < 1 || *k.MaxItems > 10000 {
			return nil, trigger.Invalid("max_items", "must be from 1 to 10000 items per poll, got %d", *k.MaxItems)
		}
		w.maxItems = *k.MaxItems
	}
	if w.interval, err = trigger.Interval("poll_interval", k.PollInterval, trigger.DefaultPollInterval); err != nil {
		return nil, err
	}
	if w.timeout, err = trigger.Interval("timeout", k.Timeout, httptrigger.DefaultTimeout); err != nil {
		return nil, err
	}
	return w, nil
}

// compile parses the jq kwarg name; required, when not "", says what a
// missing one should give.
func compile(name string, expr *string, required string) (*gojq.Code, error) {
	if expr == nil {
		if required != "" {
			return nil, trigger.Invalid(name, "is required (a jq expression giving %s)", required)
		}
		return nil, nil
	}
	q, err := gojq.Parse(*expr)
	var code *gojq.Code
	if err == nil {
		code, err = gojq.Compile(q)
	}
	if err != nil {
		return nil, trigger.Invalid(name, "is not a valid jq expression (%v): %q", err, *expr)
	}
	return code, nil
}

// Run polls until ctx ends, as an asset watcher only.
func (w *watcher) Run(ctx context.Context, rt *trigger.Runtime) error {
	if rt.Watcher == nil {
		return trigger.Permanent(trigger.ErrNotWatching)
	}
	client := &http.Client{Timeout: w.timeout}
	return trigger.Watch(ctx, rt, trigger.WatchOptions{Interval: w.interval}, func(ctx context.Context, watched []trigger.Watched) (trigger.Batch, error) {
		return w.poll(ctx, rt, client, watched)
	})
}

// fetch asks the endpoint once, passing the oldest cursor in params, and
// returns its JSON answer.
func (w *watcher) fetch(ctx context.Context, rt *trigger.Runtime, client *http.Client, oldest *position) (any, error) {
	target, err := w.Resolve(ctx, rt)
	if err != nil {
		return nil, err
	}
	if len(w.params) > 0 {
		q := target.Query()
		for name, tmpl := range w.params {
			if v, ok := oldest.render(tmpl); ok {
				q.Set(name, v)
			}
		}
		target.RawQuery = q.Encode()
	}
	req, err := operator.NewHTTPRequest(ctx, http.MethodGet, target, nil, w.Headers)
	if err != nil {
		return nil, trigger.Permanent(err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("http GET %s: %w", req.URL.Redacted(), err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := operator.ReadHTTPBody(resp)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("http GET %s answered %s", req.URL.Redacted(), resp.Status)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var body any
	if err := dec.Decode(&body); err != nil {
		return nil, fmt.Errorf("http GET %s answered a body that is not JSON: %w", req.URL.Redacted(), err)
	}
	return body, nil
}
