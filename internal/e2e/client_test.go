package e2e

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

	"github.com/weirflow/weir/internal/core"
)

// client calls the REST API (/api/v2) of a running api-server with a bearer
// token or a session cookie.
type client struct {
	t     *testing.T
	base  string // http://host:port
	http  *http.Client
	token string // bearer token; "" = rely on the cookie jar
}

func newClient(t *testing.T, base, token string) *client {
	jar, _ := cookiejar.New(nil) // cookiejar.New never fails without options
	return &client{t: t, base: strings.TrimRight(base, "/"), http: &http.Client{Jar: jar, Timeout: 30 * time.Second}, token: token}
}

// with returns a copy of c that reports to t (for subtests).
func (c *client) with(t *testing.T) *client {
	c2 := *c
	c2.t = t
	return &c2
}

// login returns a client holding admin's session cookie.
func login(t *testing.T, base, username, password string) *client {
	t.Helper()
	c := newClient(t, base, "")
	status, body := c.do(http.MethodPost, "/api/v2/auth/login", map[string]string{"username": username, "password": password})
	if status != http.StatusOK {
		t.Fatalf("login as %s: status %d: %s", username, status, body)
	}
	return c
}

// try sends a request; body (if not nil) is sent as JSON.
func (c *client) try(method, path string, body any) (int, []byte, error) {
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

// do is try that fails the test on a transport error. A GET answered 503
// (the database is briefly unreachable, e.g. while it restarts) is tried
// again for up to 30 s, as a client should.
func (c *client) do(method, path string, body any) (int, []byte) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, b, err := c.try(method, path, body)
		if err != nil {
			c.t.Fatalf("%s %s: %v", method, path, err)
		}
		if status != http.StatusServiceUnavailable || method != http.MethodGet || time.Now().After(deadline) {
			return status, b
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// call expects a 2xx answer and decodes it into out (if not nil).
func (c *client) call(method, path string, in, out any) {
	c.t.Helper()
	status, b := c.do(method, path, in)
	if status/100 != 2 {
		c.t.Fatalf("%s %s: status %d: %s", method, path, status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}

func (c *client) get(path string, out any) { c.t.Helper(); c.call(http.MethodGet, path, nil, out) }

// waitHealthy waits until GET /api/v2/health answers 200.
func (c *client) waitHealthy() {
	c.t.Helper()
	waitFor(c.t, "GET /api/v2/health at "+c.base, func() (bool, string) {
		status, b, err := c.try(http.MethodGet, "/api/v2/health", nil)
		if err != nil {
			return false, err.Error()
		}
		return status == http.StatusOK, fmt.Sprintf("status %d: %s", status, b)
	})
}

// waitDAG waits until the DAG is known to the API and returns it.
func (c *client) waitDAG(dagID string) core.DagModel {
	c.t.Helper()
	var d core.DagModel
	waitFor(c.t, "DAG "+dagID+" to be loaded", func() (bool, string) {
		status, b := c.do(http.MethodGet, "/api/v2/dags/"+dagID, nil)
		if status != http.StatusOK {
			_, errs := c.do(http.MethodGet, "/api/v2/importErrors", nil)
			return false, fmt.Sprintf("status %d: %s; import errors: %s", status, b, errs)
		}
		return json.Unmarshal(b, &d) == nil, string(b)
	})
	return d
}

func runPath(dagID, runID string) string {
	return "/api/v2/dags/" + dagID + "/dagRuns/" + url.PathEscape(runID)
}

// trigger creates a manual run with the given id and conf (nil = none).
func (c *client) trigger(dagID, runID string, conf map[string]any) core.DagRun {
	c.t.Helper()
	in := map[string]any{"dag_run_id": runID}
	if conf != nil {
		in["conf"] = conf
	}
	var run core.DagRun
	c.call(http.MethodPost, "/api/v2/dags/"+dagID+"/dagRuns", in, &run)
	return run
}

func (c *client) run(dagID, runID string) core.DagRun {
	c.t.Helper()
	var run core.DagRun
	c.get(runPath(dagID, runID), &run)
	return run
}

// waitRunDone waits until the run is success or failed and returns it.
func (c *client) waitRunDone(dagID, runID string) core.DagRun {
	c.t.Helper()
	var run core.DagRun
	waitFor(c.t, fmt.Sprintf("run %s of %s to finish", runID, dagID), func() (bool, string) {
		run = c.run(dagID, runID)
		return run.State.Terminal(), c.describeRun(dagID, runID, run)
	})
	return run
}

// waitRunSuccess waits for the run to finish and fails t unless it succeeded.
func (c *client) waitRunSuccess(dagID, runID string) core.DagRun {
	c.t.Helper()
	run := c.waitRunDone(dagID, runID)
	if run.State != core.RunSuccess {
		c.t.Fatalf("run %s of %s ended %s, want success; %s", runID, dagID, run.State, c.describeRun(dagID, runID, run))
	}
	return run
}

// describeRun summarises a run and its task instances for failure messages.
func (c *client) describeRun(dagID, runID string, run core.DagRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run state %q; task instances:", run.State)
	for _, ti := range c.taskInstances(dagID, runID) {
		fmt.Fprintf(&b, " %s[%d]=%s(try %d)", ti.TaskID, ti.MapIndex, ti.State, ti.TryNumber)
	}
	return b.String()
}

func (c *client) taskInstances(dagID, runID string) []core.TaskInstance {
	c.t.Helper()
	var page struct {
		TaskInstances []core.TaskInstance `json:"task_instances"`
	}
	c.get(runPath(dagID, runID)+"/taskInstances?limit=1000", &page)
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

func (c *client) taskInstance(dagID, runID, taskID string) core.TaskInstance {
	c.t.Helper()
	var ti core.TaskInstance
	c.get(runPath(dagID, runID)+"/taskInstances/"+taskID, &ti)
	return ti
}

// tries lists a task instance's tries, oldest first, the current one last.
func (c *client) tries(dagID, runID, taskID string) []core.TaskInstance {
	c.t.Helper()
	var page struct {
		TaskInstances []core.TaskInstance `json:"task_instances"`
	}
	c.get(runPath(dagID, runID)+"/taskInstances/"+taskID+"/tries", &page)
	return page.TaskInstances
}

// log returns the log of one try of an unmapped task.
func (c *client) log(dagID, runID, taskID string, try int) string {
	c.t.Helper()
	var l struct {
		Content string `json:"content"`
	}
	c.get(fmt.Sprintf("%s/taskInstances/%s/logs/%d", runPath(dagID, runID), taskID, try), &l)
	return l.Content
}

// waitTIState waits until an unmapped task instance is in state want and
// returns it.
func (c *client) waitTIState(dagID, runID, taskID string, want core.TIState) core.TaskInstance {
	c.t.Helper()
	var ti core.TaskInstance
	path := runPath(dagID, runID) + "/taskInstances/" + taskID
	waitFor(c.t, fmt.Sprintf("task %s of run %s to be %s", taskID, runID, want), func() (bool, string) {
		status, b := c.do(http.MethodGet, path, nil)
		if status != http.StatusOK || json.Unmarshal(b, &ti) != nil {
			return false, fmt.Sprintf("status %d: %s", status, b)
		}
		return ti.State == want, fmt.Sprintf("state %q try %d", ti.State, ti.TryNumber)
	})
	return ti
}
