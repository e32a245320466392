package execclient

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// ClientOptions tune a Client; zero fields take the defaults.
type ClientOptions struct {
	HTTPClient   *http.Client  // nil = a client with sane transport timeouts
	Timeout      time.Duration // per attempt, on top of any long-poll wait; default 30 s
	Retries      int           // extra attempts on 5xx and transport errors; default 3; <0 = none
	RetryWaitMin time.Duration // default 100 ms
	RetryWaitMax time.Duration // default 5 s
	// RetryFor keeps retrying 5xx and transport errors, beyond Retries,
	// until this long has passed since the first attempt (0 = Retries
	// alone decide): an outage is ridden out by its length, whatever
	// the random back-off drew.
	RetryFor time.Duration
	// CAFile is a PEM file of CA certificates trusted, besides the
	// system roots, to verify an https api-server ([workers] tls_ca_file);
	// used when HTTPClient is nil, and passed on to tasks (TLSEnv). Load it
	// with LoadCA first to learn of a bad file: NewClient cannot fail, and
	// falls back to the system roots alone.
	CAFile string
}

// TaskIdentity names the try a Client's execution token belongs to; the
// XComPush/XComPull shortcuts use it.
type TaskIdentity struct {
	TIID      string
	DagID     string
	RunID     string
	TaskID    string
	MapIndex  int
	TryNumber int
}

// Client calls the Execution API. It retries 5xx and transport errors with
// random exponential backoff and swaps in a Refreshed-API-Token. It is safe
// for concurrent use.
type Client struct {
	ep   *endpoints
	opts ClientOptions
	// Identity is the try this client acts for (zero for a worker client).
	Identity TaskIdentity

	mu        sync.Mutex
	token     string
	onRefresh func(string)
	// renew gets a fresh token when the API refuses this one with 401
	// (a try's token expired during an outage); nil = no renewal.
	renew func(ctx context.Context) (string, error)
	// worker is the worker's client a try's client was made from
	// (WithToken): its credential authorizes a report's claim of the
	// worker's next try (StateRequest.Next).
	worker *Client
	// inProcess says the requests go to an API in this process (Via).
	inProcess bool
}

// NewClient returns a client for the API at baseURL (ending in /execution,
// e.g. http://host:8080/execution) authenticating with token. baseURL may
// list several api-servers, comma-separated: the client calls one and
// moves to the next when it does not answer (or answers 502, 503 or 504),
// its retries spreading over them.
func NewClient(baseURL, token string, opts ClientOptions) *Client {
	if opts.HTTPClient == nil {
		var roots *x509.CertPool
		if opts.CAFile != "" {
			roots, _ = LoadCA(opts.CAFile) // checked by the caller; nil = the system roots
		}
		opts.HTTPClient = newHTTPClient(roots)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Retries == 0 {
		opts.Retries = 3
	}
	if opts.RetryWaitMin <= 0 {
		opts.RetryWaitMin = 100 * time.Millisecond
	}
	if opts.RetryWaitMax <= 0 {
		opts.RetryWaitMax = 5 * time.Second
	}
	return &Client{ep: newEndpoints(baseURL), opts: opts, token: token}
}

// Via returns a client like c whose requests go through rt instead of
// the network (standalone's worker and its api-server share a process:
// apiserver.Server.InProcess); the URLs stay what tasks' processes use.
func (c *Client) Via(rt http.RoundTripper) *Client {
	opts := c.opts
	opts.HTTPClient = &http.Client{Transport: rt}
	return &Client{ep: c.ep, opts: opts, token: c.Token(), inProcess: true}
}

// At returns a worker's client c (NewClient's, or Via's) reaching the
// api-servers at baseURLs (comma-separated, as NewClient takes them), with
// c's options, token and transport: one made before its api-server had an
// address (`weir dags test`'s worker). A try's client (WithToken) is made
// from it afterwards.
func (c *Client) At(baseURLs string) *Client {
	return &Client{ep: newEndpoints(baseURLs), opts: c.opts, token: c.Token(), inProcess: c.inProcess}
}

// InProcess says whether c's requests go to an API served by this very
// process (Via): the same binary, so the same API version.
func (c *Client) InProcess() bool { return c.inProcess }

// WithToken returns a client sharing c's connection pool and options that
// authenticates with token (a try's execution token) on behalf of id.
// When the API refuses that token (401: it expired while no api-server
// could be reached), the client asks for a fresh one with c's worker
// credential (TaskToken) once per call, and carries on with it.
func (c *Client) WithToken(token string, id TaskIdentity) *Client {
	tc := &Client{ep: c.ep, opts: c.opts, token: token, Identity: id, worker: c}
	if id.TIID != "" {
		tc.renew = func(ctx context.Context) (string, error) { return c.TaskToken(ctx, id.TIID) }
	}
	return tc
}

// TaskToken asks, with a worker credential, for a fresh execution token
// of the worker's try tiID (one it may still report).
func (c *Client) TaskToken(ctx context.Context, tiID string) (string, error) {
	var out TokenResponse
	if err := c.doJSON(ctx, http.MethodPost, tiPath(tiID, "token"), struct{}{}, &out); err != nil {
		return "", err
	}
	return out.Token, nil
}

// BaseURL returns the base URL (ending in /execution) of the api-server
// the client calls now.
func (c *Client) BaseURL() string {
	_, u := c.ep.current()
	return u
}

// BaseURLs returns every api-server's base URL, comma-separated, the one in
// use first: what a task's in-task CLI is given (EnvAPIURL), so that it
// moves to another api-server as the worker does.
func (c *Client) BaseURLs() string { return c.ep.list() }

// Token returns the current token (refreshed ones included).
func (c *Client) Token() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}

// OnTokenRefresh registers f to be called with every refreshed token.
func (c *Client) OnTokenRefresh(f func(string)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onRefresh = f
}

func (c *Client) swapToken(tok string) {
	c.mu.Lock()
	c.token = tok
	f := c.onRefresh
	c.mu.Unlock()
	if f != nil {
		f(tok)
	}
}

// Error is a non-2xx answer from the API. errors.Is matches it against the
// core sentinels by status (409 → core.ErrConflict, ...).
type Error struct {
	Status  int
	Problem Problem
}

func (e *Error) Error() string {
	msg := e.Problem.Detail
	if msg == "" {
		msg = e.Problem.Title
	}
	return fmt.Sprintf("execution api: %d %s", e.Status, msg)
}

// Is maps the status to a core sentinel error.
func (e *Error) Is(target error) bool {
	switch e.Status {
	case http.StatusUnauthorized:
		return target == core.ErrUnauthorized
	case http.StatusForbidden:
		return target == core.ErrForbidden
	case http.StatusNotFound:
		return target == core.ErrNotFound
	case http.StatusConflict:
		return target == core.ErrConflict
	case http.StatusBadRequest:
		return target == core.ErrInvalid
	case http.StatusRequestEntityTooLarge:
		return target == core.ErrTooLarge
	}
	return false
}

// call is one API request.
type call struct {
	method, path string
	query        url.Values
	body         []byte
	contentType  string
	out          any           // decoded from a 2xx JSON body when non-nil
	extra        time.Duration // added to the per-attempt timeout (long polls)
	// retryBody, when set, replaces body from the second attempt on: an
	// attempt whose answer was lost may have taken effect (a claim).
	retryBody []byte
	// asWorker also sends the worker's credential
	// (WorkerAuthorizationHeader).
	asWorker bool
}

func (c *Client) do(ctx context.Context, k call) error {
	var lastErr error
	first := time.Now()
	for attempt := 0; attempt <= max(c.opts.Retries, 0) || time.Since(first) < c.opts.RetryFor; attempt++ {
		if attempt > 0 {
			if err := c.backoff(ctx, attempt); err != nil {
				return fmt.Errorf("%s %s: %w (last error: %w)", k.method, k.path, err, lastErr)
			}
			if k.retryBody != nil {
				k.body = k.retryBody
			}
		}
		retry, err := c.attempt(ctx, k)
		if c.renew != nil && refused(err) {
			retry, err = c.renewed(ctx, k, err)
		}
		if err == nil || !retry || ctx.Err() != nil {
			return err
		}
		lastErr = err
	}
	return lastErr
}

// attempt sends the request once; retry says whether a failure is worth
// another attempt.
func (c *Client) attempt(ctx context.Context, k call) (retry bool, err error) {
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout+k.extra)
	defer cancel()
	i, base := c.ep.current()
	u := base + k.path
	if len(k.query) > 0 {
		u += "?" + k.query.Encode()
	}
	req, err := http.NewRequestWithContext(actx, k.method, u, bytes.NewReader(k.body))
	if err != nil {
		return false, fmt.Errorf("build request %s %s: %w", k.method, k.path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Token())
	if k.asWorker && c.worker != nil {
		req.Header.Set(WorkerAuthorizationHeader, "Bearer "+c.worker.Token())
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set(APIVersionHeader, APIVersion)
	if k.body != nil {
		req.Header.Set("Content-Type", k.contentType)
	}
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			c.ep.failed(i)
		}
		return true, fmt.Errorf("%s %s: %w", k.method, k.path, err)
	}
	defer func() {
		// Read what is left of a small body (an answer the caller does not
		// decode, such as PUT task state's entry) so that the connection
		// goes back to the keep-alive pool: closing an unread body closes
		// the connection, and the next call would dial again.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
	}()
	if tok := resp.Header.Get(RefreshedTokenHeader); tok != "" {
		c.swapToken(tok)
	}
	if resp.StatusCode >= 300 {
		e := &Error{Status: resp.StatusCode}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(b, &e.Problem) != nil || e.Problem.Detail == "" {
			e.Problem.Detail = strings.TrimSpace(string(b))
		}
		if unavailable(resp.StatusCode) {
			c.ep.failed(i)
		}
		return resp.StatusCode >= 500, fmt.Errorf("%s %s: %w", k.method, k.path, e)
	}
	if k.out != nil && resp.StatusCode != http.StatusNoContent {
		if err := json.NewDecoder(resp.Body).Decode(k.out); err != nil {
			return true, fmt.Errorf("%s %s: decode response: %w", k.method, k.path, err)
		}
	}
	return false, nil
}

// renewed gets a fresh token after the API refused the client's (err, a
// 401) and sends k again with it. When no fresh token came, it returns
// the renewal's error if no api-server answered it (worth another
// attempt), else err.
func (c *Client) renewed(ctx context.Context, k call, err error) (bool, error) {
	tok, rerr := c.renew(ctx)
	if e := (*Error)(nil); rerr != nil && (!errors.As(rerr, &e) || e.Status >= 500) {
		return true, fmt.Errorf("%s %s: renew the refused token: %w", k.method, k.path, rerr)
	}
	if rerr != nil {
		return false, fmt.Errorf("%w (a fresh token was refused too: %w)", err, rerr)
	}
	c.swapToken(tok)
	return c.attempt(ctx, k)
}

// refused reports whether err is the API's 401: the token was refused.
func refused(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusUnauthorized
}

func (c *Client) backoff(ctx context.Context, attempt int) error {
	ceil := min(c.opts.RetryWaitMin<<min(attempt, 20), c.opts.RetryWaitMax)
	wait := c.opts.RetryWaitMin + rand.N(max(ceil-c.opts.RetryWaitMin, 1)) //nolint:gosec // jitter
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func jsonCall(method, path string, in, out any) (call, error) {
	k := call{method: method, path: path, out: out}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return k, fmt.Errorf("encode %s %s body: %w", method, path, err)
		}
		k.body, k.contentType = b, "application/json"
	}
	return k, nil
}

func (c *Client) doJSON(ctx context.Context, method, path string, in, out any) error {
	k, err := jsonCall(method, path, in, out)
	if err != nil {
		return err
	}
	return c.do(ctx, k)
}

// Health checks that the API answers.
func (c *Client) Health(ctx context.Context) error {
	var h Health
	return c.doJSON(ctx, http.MethodGet, "/health", nil, &h)
}

// Claim long-polls for workloads (worker credential).
func (c *Client) Claim(ctx context.Context, req ClaimRequest) ([]Workload, error) {
	res, err := c.ClaimAll(ctx, req)
	if err != nil {
		return nil, err
	}
	return res.Workloads, nil
}

// ClaimAll long-polls for workloads and, with req.CallbackLimit, fired
// callbacks (worker credential).
func (c *Client) ClaimAll(ctx context.Context, req ClaimRequest) (*ClaimResponse, error) {
	k, err := jsonCall(http.MethodPost, "/workloads/claim", req, new(ClaimResponse))
	if err != nil {
		return nil, err
	}
	if !req.Reclaim { // a retry reclaims what an attempt whose answer was lost claimed
		req.Reclaim = true
		if k.retryBody, err = json.Marshal(req); err != nil {
			return nil, fmt.Errorf("encode claim: %w", err)
		}
	}
	k.extra = time.Duration(req.WaitSeconds * float64(time.Second))
	if err := c.do(ctx, k); err != nil {
		return nil, err
	}
	res := k.out.(*ClaimResponse)
	for i := range res.Workloads {
		res.Workloads[i].RestoreRun()
	}
	return res, nil
}

func tiPath(id, what string) string { return "/task-instances/" + url.PathEscape(id) + "/" + what }

// Run moves a claimed try to running and returns its run context.
func (c *Client) Run(ctx context.Context, tiID string, req RunRequest) (*RunContext, error) {
	var rc RunContext
	if err := c.doJSON(ctx, http.MethodPatch, tiPath(tiID, "run"), req, &rc); err != nil {
		return nil, err
	}
	return &rc, nil
}

// SetState ends a running try; the answer says whether it will be retried.
func (c *Client) SetState(ctx context.Context, tiID string, state core.TIState) (*StateResponse, error) {
	return c.Finish(ctx, tiID, StateRequest{State: state})
}

// Finish is SetState with the rest of a final report: the end of the
// try's log (req.Log), which the server stores before it ends the try
// (sent again after a lost answer, the tail is stored once: its offset),
// and the claim of the worker's next try (req.Next), which a try's client
// made by a worker's (WithToken) authorizes with the worker's credential.
// A report with Next whose answer is an error may have claimed a try the
// worker does not know of: its next claim should reclaim.
func (c *Client) Finish(ctx context.Context, tiID string, req StateRequest) (*StateResponse, error) {
	var sr StateResponse
	k, err := jsonCall(http.MethodPatch, tiPath(tiID, "state"), req, &sr)
	if err != nil {
		return nil, err
	}
	if k.asWorker = req.Next != nil; k.asWorker {
		// A retry may find the try ended by an attempt whose answer was
		// lost (that attempt's claim is reclaimed), or end it now: it
		// claims nothing.
		again := req
		again.Next = nil
		if k.retryBody, err = json.Marshal(again); err != nil {
			return nil, fmt.Errorf("encode state report: %w", err)
		}
	}
	if err := c.do(ctx, k); err != nil {
		return nil, err
	}
	if sr.Next != nil {
		sr.Next.RestoreRun()
	}
	return &sr, nil
}

// Defer ends the running try's worker step and defers it on d's trigger:
// its slot is free, and it resumes (on any worker) when the trigger fires.
// An error matching core.ErrInvalid names a bad trigger or timeout.
func (c *Client) Defer(ctx context.Context, tiID string, d core.Deferral) (*StateResponse, error) {
	var sr StateResponse
	if err := c.doJSON(ctx, http.MethodPatch, tiPath(tiID, "state"), StateRequest{State: core.TIDeferred, Deferral: &d}, &sr); err != nil {
		return nil, err
	}
	return &sr, nil
}

// Heartbeat records liveness; an error matching core.ErrConflict means the
// try is no longer running and must be stopped.
func (c *Client) Heartbeat(ctx context.Context, tiID string, req HeartbeatRequest) error {
	return c.doJSON(ctx, http.MethodPut, tiPath(tiID, "heartbeat"), req, nil)
}

// AppendLog ships chunk, the bytes of a try's log from byte offset on, to
// the api-server and returns the log's length there afterwards (the offset
// of the next chunk). Sending a chunk again is harmless: the server stores
// only the bytes it does not hold, so retries after a lost answer never
// duplicate lines. A chunk past the end of the server's log is refused;
// LogGap reads the length the server expects from that error.
func (c *Client) AppendLog(ctx context.Context, tiID string, offset int64, chunk []byte) (int64, error) {
	var out LogAppendResponse
	k := call{method: http.MethodPost, path: tiPath(tiID, "logs"), query: url.Values{"offset": {strconv.FormatInt(offset, 10)}},
		body: chunk, contentType: "text/plain; charset=utf-8", out: &out}
	if err := c.do(ctx, k); err != nil {
		return 0, err
	}
	return out.NextOffset, nil
}

// LogGap reports whether err is the API's refusal of a log chunk that
// starts past the end of the stored log, and the offset it expects.
func LogGap(err error) (expected int64, ok bool) {
	var e *Error
	if errors.As(err, &e) && e.Problem.Reason == ReasonLogGap && e.Problem.ExpectedOffset != nil {
		return *e.Problem.ExpectedOffset, true
	}
	return 0, false
}

func xcomPath(k XComKey) (string, url.Values) {
	p := "/xcoms/" + url.PathEscape(k.DagID) + "/" + url.PathEscape(k.RunID) + "/" +
		url.PathEscape(k.TaskID) + "/" + url.PathEscape(k.Key)
	if k.MapIndex == AnyMapIndex {
		return p, nil
	}
	return p, url.Values{"map_index": {fmt.Sprint(k.MapIndex)}}
}

// XComGet returns an XCom's JSON value; core.ErrNotFound when absent.
func (c *Client) XComGet(ctx context.Context, k XComKey) (json.RawMessage, error) {
	var x XComResponse
	p, q := xcomPath(k)
	if err := c.do(ctx, call{method: http.MethodGet, path: p, query: q, out: &x}); err != nil {
		return nil, err
	}
	return x.Value, nil
}

// XComSet stores value (JSON) under k, which must be the token's own try.
func (c *Client) XComSet(ctx context.Context, k XComKey, value json.RawMessage) error {
	p, q := xcomPath(k)
	return c.do(ctx, call{method: http.MethodPost, path: p, query: q, body: value, contentType: "application/json"})
}

// XComDelete deletes the token's own XCom k.
func (c *Client) XComDelete(ctx context.Context, k XComKey) error {
	p, q := xcomPath(k)
	return c.do(ctx, call{method: http.MethodDelete, path: p, query: q})
}

// XComPush stores value (encoded as JSON) under key for the client's own try.
func (c *Client) XComPush(ctx context.Context, key string, value any) error {
	b, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("encode XCom %q: %w", key, err)
	}
	id := c.Identity
	return c.XComSet(ctx, XComKey{DagID: id.DagID, RunID: id.RunID, TaskID: id.TaskID, MapIndex: id.MapIndex, Key: key}, b)
}

// XComPull reads the XCom key ("" = return_value) of taskID (map index
// mapIndex, -1 when unmapped; AnyMapIndex: the task's value, or a mapped
// task's values as one list) in the client's own DAG run.
func (c *Client) XComPull(ctx context.Context, taskID, key string, mapIndex int) (json.RawMessage, error) {
	if key == "" {
		key = core.DefaultXComKey
	}
	id := c.Identity
	if id.DagID == "" || id.RunID == "" {
		return nil, errors.New("xcom pull: the client has no task identity (WEIR_DAG_ID, WEIR_RUN_ID)")
	}
	return c.XComGet(ctx, XComKey{DagID: id.DagID, RunID: id.RunID, TaskID: taskID, MapIndex: mapIndex, Key: key})
}

// WorkerHeartbeat says the worker process is alive and refreshes the tries
// it holds (worker credential).
func (c *Client) WorkerHeartbeat(ctx context.Context, req WorkerHeartbeatRequest) error {
	return c.doJSON(ctx, http.MethodPost, "/workers/heartbeat", req, nil)
}
