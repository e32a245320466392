package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/template"
)

// WebhookBody is the JSON body the webhook notifier posts
// (docs/emission.md#notifiers). Task fields are absent for a DAG-level
// callback.
type WebhookBody struct {
	Version      int        `json:"version"`     // 1
	DeliveryID   string     `json:"delivery_id"` // the callback's id: the same on every attempt, also in X-Weir-Delivery
	Attempt      int        `json:"attempt"`
	Event        string     `json:"event"`   // on_failure, ...
	Level        string     `json:"level"`   // task | dag
	Outcome      string     `json:"outcome"` // the state that fired it
	DagID        string     `json:"dag_id"`
	RunID        string     `json:"run_id"`
	RunType      string     `json:"run_type"`
	TaskID       string     `json:"task_id,omitempty"`
	MapIndex     *int       `json:"map_index,omitempty"`
	TryNumber    int        `json:"try_number,omitempty"`
	PartitionKey *string    `json:"partition_key"`
	LogicalDate  *time.Time `json:"logical_date,omitempty"`
	StartDate    *time.Time `json:"start_date,omitempty"`
	EndDate      *time.Time `json:"end_date,omitempty"` // the run's end, for a DAG-level callback
}

// DeliveryHeader carries the webhook's delivery id.
const DeliveryHeader = "X-Weir-Delivery"

// webhookBody builds the body of cw's webhook.
func webhookBody(cw *execclient.CallbackWorkload) WebhookBody {
	cb, run := &cw.Callback, &cw.DagRun
	b := WebhookBody{Version: 1, DeliveryID: strconv.FormatInt(cb.ID, 10), Attempt: cb.Attempts, Event: string(cb.Event),
		Level: string(cb.Level), Outcome: cb.Outcome, DagID: cb.DagID, RunID: cb.RunID, RunType: string(run.RunType),
		PartitionKey: run.PartitionKey, LogicalDate: run.LogicalDate, StartDate: run.StartDate}
	if cb.Level == core.CallbackTask {
		mi := cb.MapIndex
		b.TaskID, b.MapIndex, b.TryNumber = cb.TaskID, &mi, cb.TryNumber
	} else {
		b.EndDate = run.EndDate
	}
	return b
}

// webhook posts the webhook notifier's body to its connection's URL with
// the connection's auth and headers (webhookHeaders). An answer other than
// 2xx fails the callback.
func (w *Worker) webhook(ctx context.Context, cw execclient.CallbackWorkload, cc *execclient.Client, red *operator.Redactor) error {
	cb := &cw.Callback
	lookup := operator.Chain(w.Connections, execclient.CallbackConnections{Client: cc, ID: cb.ID})
	uri, err := lookup.ConnectionURI(ctx, cb.Spec.ConnID)
	if err != nil {
		return fmt.Errorf("look up connection %q: %w", cb.Spec.ConnID, err)
	}
	target, err := url.Parse(uri)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") {
		return fmt.Errorf("connection %q must be an http(s) URL for the webhook notifier: %w", cb.Spec.ConnID, core.ErrInvalid)
	}
	if pw, ok := target.User.Password(); ok {
		red.Add(pw)
	}
	headers, err := webhookHeaders(target, cb.Spec.ConnID)
	if err != nil {
		return err
	}
	body, err := json.Marshal(webhookBody(&cw))
	if err != nil {
		return fmt.Errorf("encode the webhook body: %w", err)
	}
	headers["Content-Type"], headers[DeliveryHeader], headers["User-Agent"] = "application/json", strconv.FormatInt(cb.ID, 10), "weir-webhook/1"
	hreq, err := operator.NewHTTPRequest(ctx, http.MethodPost, target, bytes.NewReader(body), headers)
	if err != nil {
		return err
	}
	host := target.Host
	_, _ = fmt.Fprintf(red, "[%s] weir: POST webhook to %s (connection %s)\n", w.Clock.Now().Format(time.RFC3339), host, cb.Spec.ConnID)
	resp, err := http.DefaultClient.Do(hreq) //nolint:gosec // the URL is the deployment's connection
	if err != nil {
		return fmt.Errorf("webhook to %s: %w", host, err)
	}
	defer func() { _ = resp.Body.Close() }()
	answer, _ := operator.ReadHTTPBody(resp)
	_, _ = fmt.Fprintf(red, "[%s] weir: webhook answered %s\n", w.Clock.Now().Format(time.RFC3339), resp.Status)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("webhook to %s answered %s: %.200s", host, resp.Status, answer)
	}
	return nil
}

// emitNotifierEvent renders the asset_event notifier's partition key and
// extra over tctx and emits its event through the Execution API.
func emitNotifierEvent(ctx context.Context, cw execclient.CallbackWorkload, cc *execclient.Client, tctx map[string]any,
	red *operator.Redactor) error {
	spec := &cw.Callback.Spec
	var req execclient.CallbackEmitRequest
	if spec.PartitionKey != "" {
		key, err := template.Render(spec.PartitionKey, tctx, template.Funcs{Syntax: spec.TemplateSyntax})
		if err != nil {
			return fmt.Errorf("render partition_key: %w", err)
		}
		req.PartitionKey = &key
	}
	if spec.Extra != nil {
		extra, err := template.RenderArgs(spec.Extra, tctx, template.Funcs{Syntax: spec.TemplateSyntax})
		if err != nil {
			return fmt.Errorf("render extra: %w", err)
		}
		if req.Extra, err = json.Marshal(extra); err != nil {
			return fmt.Errorf("encode extra: %w", err)
		}
	}
	rec, err := cc.CallbackEmit(ctx, cw.Callback.ID, req)
	if err != nil {
		return err
	}
	line, _ := json.Marshal(rec)
	_, _ = fmt.Fprintf(red, "weir: emitted an event of asset %s: %s\n", spec.Asset, line)
	return nil
}

// ExtraParam is the query parameter of a connection URI that carries the
// connection's extra as JSON (Airflow's __extra__); the webhook notifier
// reads its "headers" and does not send the parameter.
const ExtraParam = "__extra__"

// webhookHeaders takes the connection's auth and headers out of target
// (docs/emission.md#notifiers): a password without a login is a bearer
// token (a login and password stay basic auth, which NewHTTPRequest
// sets); the extra's "headers" (an object of strings) are added. A bad
// extra is an error naming the connection.
func webhookHeaders(target *url.URL, connID string) (map[string]string, error) {
	headers := map[string]string{}
	q := target.Query()
	if raw := q.Get(ExtraParam); raw != "" {
		var extra struct {
			Headers map[string]string `json:"headers"`
		}
		if err := json.Unmarshal([]byte(raw), &extra); err != nil {
			return nil, fmt.Errorf("connection %q: its extra (%s) must be a JSON object whose \"headers\" maps names to strings: %w: %w",
				connID, ExtraParam, err, core.ErrInvalid)
		}
		for k, v := range extra.Headers {
			headers[http.CanonicalHeaderKey(k)] = v
		}
		q.Del(ExtraParam)
		target.RawQuery = q.Encode()
	}
	if pw, ok := target.User.Password(); ok && target.User.Username() == "" {
		headers["Authorization"] = "Bearer " + pw
		target.User = nil
	}
	return headers, nil
}
