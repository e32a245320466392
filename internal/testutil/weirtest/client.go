package weirtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
)

// Client calls the REST API (/api/v2) of a running api-server with a bearer
// token or a session cookie, failing its test T on a transport error.
type Client struct {
	T     testing.TB
	base  string // http://host:port
	http  *http.Client
	token string // bearer token; "" = rely on the cookie jar
}

// NewClient returns a client of the API at base (http://host:port) sending
// token ("" = none, rely on a session cookie).
func NewClient(t testing.TB, base, token string) *Client {
	jar, _ := cookiejar.New(nil) // cookiejar.New never fails without options
	return &Client{T: t, base: strings.TrimRight(base, "/"), http: &http.Client{Jar: jar, Timeout: 30 * time.Second}, token: token}
}

// Base is the API's address, http://host:port.
func (c *Client) Base() string { return c.base }

// WithTransport returns a copy of c that sends its requests through rt
// (an https server's CA, for example), keeping c's cookies.
func (c *Client) WithTransport(rt http.RoundTripper) *Client {
	c2 := *c
	h := *c.http
	h.Transport = rt
	c2.http = &h
	return &c2
}

// With returns a copy of c that reports to t (for subtests).
func (c *Client) With(t testing.TB) *Client {
	c2 := *c
	c2.T = t
	return &c2
}

// Login returns a client holding the session cookie of username.
func Login(t testing.TB, base, username, password string) *Client {
	t.Helper()
	c := NewClient(t, base, "")
	status, body := c.Do(http.MethodPost, "/api/v2/auth/login", map[string]string{"username": username, "password": password})
	if status != http.StatusOK {
		t.Fatalf("login as %s: status %d: %s", username, status, body)
	}
	return c
}

// Try sends a request; body (if not nil) is sent as JSON.
func (c *Client) Try(method, path string, body any) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// Do is try that fails the test on a transport error. A GET answered 503
// (the database is briefly unreachable, e.g. while it restarts) is tried
// again for up to 30 s, as a client should.
func (c *Client) Do(method, path string, body any) (int, []byte) {
	c.T.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, b, err := c.Try(method, path, body)
		if err != nil {
			c.T.Fatalf("%s %s: %v", method, path, err)
		}
		if status != http.StatusServiceUnavailable || method != http.MethodGet || time.Now().After(deadline) {
			return status, b
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Call expects a 2xx answer and decodes it into out (if not nil).
func (c *Client) Call(method, path string, in, out any) {
	c.T.Helper()
	status, b := c.Do(method, path, in)
	if status/100 != 2 {
		c.T.Fatalf("%s %s: status %d: %s", method, path, status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.T.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}

// Get expects a 2xx answer to GET path and decodes it into out.
func (c *Client) Get(path string, out any) { c.T.Helper(); c.Call(http.MethodGet, path, nil, out) }

// WaitHealthy waits until GET /api/v2/health answers 200.
func (c *Client) WaitHealthy() {
	c.T.Helper()
	WaitFor(c.T, "GET /api/v2/health at "+c.base, func() (bool, string) {
		status, b, err := c.Try(http.MethodGet, "/api/v2/health", nil)
		if err != nil {
			return false, err.Error()
		}
		return status == http.StatusOK, fmt.Sprintf("status %d: %s", status, b)
	})
}

// WaitDAG waits until the DAG is known to the API and returns it.
func (c *Client) WaitDAG(dagID string) core.DagModel {
	c.T.Helper()
	var d api.DAGDetails
	WaitFor(c.T, "DAG "+dagID+" to be loaded", func() (bool, string) {
		status, b := c.Do(http.MethodGet, "/api/v2/dags/"+dagID, nil)
		if status != http.StatusOK {
			_, errs := c.Do(http.MethodGet, "/api/v2/importErrors", nil)
			return false, fmt.Sprintf("status %d: %s; import errors: %s", status, b, errs)
		}
		return json.Unmarshal(b, &d) == nil, string(b)
	})
	return d.Dag()
}

// RunPath is the REST path of a run.
func RunPath(dagID, runID string) string {
	return "/api/v2/dags/" + dagID + "/dagRuns/" + url.PathEscape(runID)
}

// Trigger creates a manual run with the given id and conf (nil = none).
func (c *Client) Trigger(dagID, runID string, conf map[string]any) core.DagRun {
	c.T.Helper()
	in := map[string]any{"dag_run_id": runID}
	if conf != nil {
		in["conf"] = conf
	}
	var run core.DagRun
	c.Call(http.MethodPost, "/api/v2/dags/"+dagID+"/dagRuns", in, &run)
	return run
}

// Run returns a run.
func (c *Client) Run(dagID, runID string) core.DagRun {
	c.T.Helper()
	var run core.DagRun
	c.Get(RunPath(dagID, runID), &run)
	return run
}

// WaitRunDone waits until the run is success or failed and returns it.
func (c *Client) WaitRunDone(dagID, runID string) core.DagRun {
	c.T.Helper()
	var run core.DagRun
	WaitFor(c.T, fmt.Sprintf("run %s of %s to finish", runID, dagID), func() (bool, string) {
		run = c.Run(dagID, runID)
		return run.State.Terminal(), c.DescribeRun(dagID, runID, run)
	})
	return run
}

// WaitRunSuccess waits for the run to finish and fails t unless it succeeded.
func (c *Client) WaitRunSuccess(dagID, runID string) core.DagRun {
	c.T.Helper()
	run := c.WaitRunDone(dagID, runID)
	if run.State != core.RunSuccess {
		c.T.Fatalf("run %s of %s ended %s, want success; %s", runID, dagID, run.State, c.DescribeRun(dagID, runID, run))
	}
	return run
}

// DescribeRun summarises a run and its task instances for failure messages.
func (c *Client) DescribeRun(dagID, runID string, run core.DagRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run state %q; task instances:", run.State)
	for _, ti := range c.TaskInstances(dagID, runID) {
		fmt.Fprintf(&b, " %s[%d]=%s(try %d)", ti.TaskID, ti.MapIndex, ti.State, ti.TryNumber)
	}
	return b.String()
}

// TaskInstances lists a run's task instances by task and map index.
func (c *Client) TaskInstances(dagID, runID string) []core.TaskInstance {
	c.T.Helper()
	var page struct {
		TaskInstances []core.TaskInstance `json:"task_instances"`
	}
	c.Get(RunPath(dagID, runID)+"/taskInstances?limit=1000", &page)
	slices.SortFunc(page.TaskInstances, func(a, b core.TaskInstance) int {
		return cmpOr(strings.Compare(a.TaskID, b.TaskID), a.MapIndex-b.MapIndex)
	})
	return page.TaskInstances
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// TaskInstance returns an unmapped task instance.
func (c *Client) TaskInstance(dagID, runID, taskID string) core.TaskInstance {
	c.T.Helper()
	var ti core.TaskInstance
	c.Get(RunPath(dagID, runID)+"/taskInstances/"+taskID, &ti)
	return ti
}

// Tries lists a task instance's tries, oldest first, the current one last.
func (c *Client) Tries(dagID, runID, taskID string) []core.TaskInstance {
	c.T.Helper()
	var page struct {
		TaskInstances []core.TaskInstance `json:"task_instances"`
	}
	c.Get(RunPath(dagID, runID)+"/taskInstances/"+taskID+"/tries", &page)
	return page.TaskInstances
}

// Log returns the log of one try of an unmapped task.
func (c *Client) Log(dagID, runID, taskID string, try int) string {
	c.T.Helper()
	var l api.LogChunk
	c.Get(fmt.Sprintf("%s/taskInstances/%s/logs/%d", RunPath(dagID, runID), taskID, try), &l)
	return string(l.Text())
}

// WaitTIState waits until an unmapped task instance is in state want and
// returns it.
func (c *Client) WaitTIState(dagID, runID, taskID string, want core.TIState) core.TaskInstance {
	c.T.Helper()
	var ti core.TaskInstance
	path := RunPath(dagID, runID) + "/taskInstances/" + taskID
	WaitFor(c.T, fmt.Sprintf("task %s of run %s to be %s", taskID, runID, want), func() (bool, string) {
		status, b := c.Do(http.MethodGet, path, nil)
		if status != http.StatusOK || json.Unmarshal(b, &ti) != nil {
			return false, fmt.Sprintf("status %d: %s", status, b)
		}
		return ti.State == want, fmt.Sprintf("state %q try %d", ti.State, ti.TryNumber)
	})
	return ti
}
