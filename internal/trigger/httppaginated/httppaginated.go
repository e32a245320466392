// Package httppaginated holds the http_paginated trigger: a streaming
// trigger that follows a paginated HTTP API — by a next link, a cursor or
// a page number — and yields each page, or each item of each page, as an
// event in order (docs/triggers.md#http_paginated). URLs, connections and
// headers are the http trigger's.
package httppaginated

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/itchyny/gojq"

	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/httptrigger"
)

// Type is the http_paginated trigger. kwargs: {"url": "https://api/orders",
// "next_link": ".next"} (or "cursor" with "cursor_param", or "page_param"),
// with optional items, emit, max_pages, headers and timeout.
var Type = trigger.Type{
	Name:    "http_paginated",
	Summary: "follows a paginated HTTP API (next link, cursor or page number) and yields each page or each item (a stream)",
	New:     newTrigger,
	Uses:    trigger.UseDeferral | trigger.UseStream,
}

// Emit modes.
const (
	emitPages = "pages"
	emitItems = "items"
)

// paginated is a built http_paginated trigger.
type paginated struct {
	httptrigger.Target
	next, cursor, items *gojq.Code // how to find the next page, and a page's items
	cursorParam         string
	pageParam           string
	firstPage           int
	emit                string
	maxPages            int
	timeout             time.Duration
}

type kwargs struct {
	URL         *string           `json:"url"`
	HTTPConnID  *string           `json:"http_conn_id"`
	Endpoint    *string           `json:"endpoint"`
	Headers     map[string]string `json:"headers"`
	NextLink    *string           `json:"next_link"`
	Cursor      *string           `json:"cursor"`
	CursorParam *string           `json:"cursor_param"`
	PageParam   *string           `json:"page_param"`
	FirstPage   *int              `json:"first_page"`
	Items       *string           `json:"items"`
	Emit        *string           `json:"emit"`
	MaxPages    *int              `json:"max_pages"`
	Timeout     *string           `json:"timeout"`
}

func newTrigger(raw json.RawMessage) (trigger.Trigger, error) {
	var k kwargs
	if err := trigger.DecodeKwargs(raw, &k); err != nil {
		return nil, err
	}
	p := &paginated{emit: emitPages, firstPage: 1}
	var err error
	if p.Target, err = httptrigger.ParseTarget(k.URL, k.HTTPConnID, k.Endpoint, k.Headers); err != nil {
		return nil, err
	}
	modes := 0
	for _, m := range []*string{k.NextLink, k.Cursor, k.PageParam} {
		if m != nil {
			modes++
		}
	}
	if modes != 1 {
		return nil, trigger.Invalid("next_link", "or cursor (with cursor_param) or page_param is required, exactly one: how to reach the next page")
	}
	if p.next, err = compile("next_link", k.NextLink); err != nil {
		return nil, err
	}
	if p.cursor, err = compile("cursor", k.Cursor); err != nil {
		return nil, err
	}
	if p.items, err = compile("items", k.Items); err != nil {
		return nil, err
	}
	switch {
	case k.Cursor != nil && (k.CursorParam == nil || *k.CursorParam == ""):
		return nil, trigger.Invalid("cursor_param", "is required with cursor: the query parameter that carries the cursor")
	case k.Cursor == nil && k.CursorParam != nil:
		return nil, trigger.Invalid("cursor_param", "is only for cursor pagination")
	case k.PageParam != nil && *k.PageParam == "":
		return nil, trigger.Invalid("page_param", "must name the query parameter that carries the page number")
	case k.PageParam != nil && k.Items == nil:
		return nil, trigger.Invalid("items", "is required with page_param: the last page is the first with no items")
	case k.PageParam == nil && k.FirstPage != nil:
		return nil, trigger.Invalid("first_page", "is only for page_param pagination")
	}
	if k.CursorParam != nil {
		p.cursorParam = *k.CursorParam
	}
	if k.PageParam != nil {
		p.pageParam = *k.PageParam
	}
	if k.FirstPage != nil {
		p.firstPage = *k.FirstPage
	}
	if k.Emit != nil {
		switch *k.Emit {
		case emitPages:
		case emitItems:
			if k.Items == nil {
				return nil, trigger.Invalid("emit", "items needs the items kwarg: the jq expression of a page's items")
			}
		default:
			return nil, trigger.Invalid("emit", "must be %s (one event per page) or %s (one event per item), got %q", emitPages, emitItems, *k.Emit)
		}
		p.emit = *k.Emit
	}
	if k.MaxPages != nil {
		if *k.MaxPages < 1 {
			return nil, trigger.Invalid("max_pages", "must be at least 1, got %d", *k.MaxPages)
		}
		p.maxPages = *k.MaxPages
	}
	if p.timeout, err = trigger.Interval("timeout", k.Timeout, httptrigger.DefaultTimeout); err != nil {
		return nil, err
	}
	return p, nil
}

// compile compiles the jq expression of kwarg name, if given.
func compile(name string, src *string) (*gojq.Code, error) {
	if src == nil {
		return nil, nil
	}
	q, err := gojq.Parse(*src)
	var code *gojq.Code
	if err == nil {
		code, err = gojq.Compile(q)
	}
	if err != nil {
		return nil, trigger.Invalid(name, "is not a valid jq expression (%v): %q", err, *src)
	}
	return code, nil
}

// Page is the event of one page (emit: pages): its number, counting from
// 1, the URL it came from and its JSON body (its items with items).
type Page struct {
	Page  int    `json:"page"`
	URL   string `json:"url"`
	Body  any    `json:"body,omitempty"`
	Items []any  `json:"items,omitempty"`
}

// Run fetches the pages in order and emits each (or each of its items).
// Resuming a stream after its last persisted event, it fetches the pages
// again from the first — directly the next one with page_param and one
// event per page — and emits only the events after it: the API must
// serve the same pages in the same order.
func (p *paginated) Run(ctx context.Context, rt *trigger.Runtime) error {
	client := &http.Client{Timeout: p.timeout}
	u, err := p.Resolve(ctx, rt)
	if err != nil {
		return err
	}
	skip := int64(0)
	if rt.Stream != nil {
		skip = rt.Stream.LastIndex + 1
	}
	pageNo := 1
	if p.pageParam != "" && p.emit == emitPages && skip > 0 {
		pageNo, skip = int(skip)+1, 0
	}
	for ; p.maxPages == 0 || pageNo <= p.maxPages; pageNo++ {
		if p.pageParam != "" {
			u = withParam(u, p.pageParam, strconv.Itoa(p.firstPage+pageNo-1))
		}
		body, err := p.fetchRetrying(ctx, rt, client, u)
		if err != nil {
			return err
		}
		items, err := p.pageItems(ctx, body)
		if err != nil {
			return err
		}
		if p.pageParam != "" && len(items) == 0 {
			return nil // the first page with no items ends the stream
		}
		events := p.events(pageNo, u, body, items)
		if n := int64(len(events)); skip >= n {
			skip -= n
		} else {
			if err := rt.EmitBatch(ctx, events[skip:]...); err != nil {
				return err
			}
			skip = 0
		}
		next, ok, err := p.nextURL(ctx, u, body)
		if err != nil || !ok {
			return err
		}
		u = next
	}
	return nil
}

// events are a page's events: the page, or its items.
func (p *paginated) events(pageNo int, u *url.URL, body any, items []any) []any {
	if p.emit == emitItems {
		return items
	}
	pg := Page{Page: pageNo, URL: u.Redacted()}
	if p.items != nil {
		pg.Items = items
	} else {
		pg.Body = body
	}
	return []any{pg}
}

// Attempts at one page: a request that fails in transport or answers a
// 5xx is tried again after fetchBackoff, doubling, up to fetchAttempts
// times in all, each failure written to the trigger log.
const (
	fetchAttempts = 4
	fetchBackoff  = 250 * time.Millisecond
)

// fetchRetrying fetches u, trying again after a transient failure.
func (p *paginated) fetchRetrying(ctx context.Context, rt *trigger.Runtime, client *http.Client, u *url.URL) (any, error) {
	wait := fetchBackoff
	for attempt := 1; ; attempt++ {
		body, err := p.fetch(ctx, client, u)
		var te transient
		if err == nil || !errors.As(err, &te) || attempt == fetchAttempts {
			return body, err
		}
		rt.Logf("attempt %d of %d failed, trying again in %s: %v", attempt, fetchAttempts, wait, err)
		if err := trigger.Sleep(ctx, wait); err != nil {
			return nil, err
		}
		wait *= 2
	}
}

// transient marks a failure that another attempt may not meet.
type transient struct{ error }

func (t transient) Unwrap() error { return t.error }

// fetch GETs u and returns its JSON body.
func (p *paginated) fetch(ctx context.Context, client *http.Client, u *url.URL) (any, error) {
	req, err := operator.NewHTTPRequest(ctx, http.MethodGet, u, nil, p.Headers)
	if err != nil {
		return nil, trigger.Permanent(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, transient{fmt.Errorf("http_paginated GET %s: %w", u.Redacted(), err)}
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := operator.ReadHTTPBody(resp)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 500 {
		return nil, transient{fmt.Errorf("http_paginated GET %s answered %s", u.Redacted(), resp.Status)}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("http_paginated GET %s answered %s", u.Redacted(), resp.Status)
	}
	var body any
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, fmt.Errorf("http_paginated GET %s: the body is not JSON: %w", u.Redacted(), err)
	}
	return body, nil
}

// pageItems runs the items expression on body: its output must be an
// array (nil without the expression).
func (p *paginated) pageItems(ctx context.Context, body any) ([]any, error) {
	if p.items == nil {
		return nil, nil
	}
	v, _ := p.items.RunWithContext(ctx, body).Next()
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []any:
		return x, nil
	case error:
		return nil, fmt.Errorf("http_paginated: items: %w", x)
	}
	return nil, fmt.Errorf("http_paginated: items must select an array, got %T", v)
}

// nextURL is the page after u's, and false after the last page.
func (p *paginated) nextURL(ctx context.Context, u *url.URL, body any) (*url.URL, bool, error) {
	switch {
	case p.pageParam != "":
		return u, true, nil
	case p.next != nil:
		link, ok, err := first(ctx, p.next, body, "next_link")
		if err != nil || !ok {
			return nil, false, err
		}
		ref, err := url.Parse(link)
		if err != nil {
			return nil, false, fmt.Errorf("http_paginated: next_link %q is not a URL: %w", link, err)
		}
		return u.ResolveReference(ref), true, nil
	default:
		c, ok, err := first(ctx, p.cursor, body, "cursor")
		if err != nil || !ok {
			return nil, false, err
		}
		return withParam(u, p.cursorParam, c), true, nil
	}
}

// first runs code on body: a string or number is the value, null, false
// or "" means there is no next page.
func first(ctx context.Context, code *gojq.Code, body any, name string) (string, bool, error) {
	v, _ := code.RunWithContext(ctx, body).Next()
	switch x := v.(type) {
	case nil, bool:
		if x == true {
			return "", false, fmt.Errorf("http_paginated: %s must select a string or number, got true", name)
		}
		return "", false, nil
	case string:
		return x, x != "", nil
	case int, float64:
		return fmt.Sprint(x), true, nil
	case error:
		return "", false, fmt.Errorf("http_paginated: %s: %w", name, x)
	}
	return "", false, fmt.Errorf("http_paginated: %s must select a string or number, got %T", name, v)
}

// withParam returns u with query parameter name set to value.
func withParam(u *url.URL, name, value string) *url.URL {
	c := *u
	q := c.Query()
	q.Set(name, value)
	c.RawQuery = q.Encode()
	return &c
}
