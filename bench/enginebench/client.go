package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"runtime"
	"time"
)

// client drives the standalone through the public REST API (/api/v2).
type client struct {
	base string
	http *http.Client
}

type dagRun struct {
	RunID   string     `json:"dag_run_id"`
	State   string     `json:"state"`
	EndDate *time.Time `json:"end_date"`
}

type taskInstance struct {
	TaskID    string     `json:"task_id"`
	State     string     `json:"state"`
	StartDate *time.Time `json:"start_date"`
	EndDate   *time.Time `json:"end_date"`
	QueuedAt  *time.Time `json:"queued_dttm"`
}

func (c *client) do(ctx context.Context, method, path string, body, out any) (int, error) {
	if c.http == nil {
		jar, _ := cookiejar.New(nil)
		c.http = &http.Client{Jar: jar, Timeout: 30 * time.Second}
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, b)
	}
	if out != nil {
		return resp.StatusCode, json.Unmarshal(b, out)
	}
	return resp.StatusCode, nil
}

// poll calls f every interval until it returns true or an error, or ctx ends.
func poll(ctx context.Context, interval time.Duration, f func() (bool, error)) error {
	for {
		ok, err := f()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// waitHealthy waits until the server answers, or died (the server's
// process exited) returns an error.
func (c *client) waitHealthy(ctx context.Context, died func() error) error {
	return poll(ctx, 50*time.Millisecond, func() (bool, error) {
		if err := died(); err != nil {
			return false, err
		}
		_, err := c.do(ctx, http.MethodGet, "/health", nil, nil)
		return err == nil, nil
	})
}

func (c *client) login(ctx context.Context, user, password string) error {
	_, err := c.do(ctx, http.MethodPost, "/auth/login", map[string]string{"username": user, "password": password}, nil)
	return err
}

func (c *client) waitDag(ctx context.Context, dagID string) error {
	return poll(ctx, 50*time.Millisecond, func() (bool, error) {
		var d struct {
			IsPaused bool `json:"is_paused"`
		}
		code, err := c.do(ctx, http.MethodGet, "/dags/"+url.PathEscape(dagID), nil, &d)
		if code == http.StatusNotFound {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if d.IsPaused {
			_, err = c.do(ctx, http.MethodPatch, "/dags/"+url.PathEscape(dagID), map[string]bool{"is_paused": false}, nil)
			return err == nil, err
		}
		return true, nil
	})
}

func (c *client) trigger(ctx context.Context, dagID string) (string, error) {
	var run dagRun
	_, err := c.do(ctx, http.MethodPost, "/dags/"+url.PathEscape(dagID)+"/dagRuns", map[string]any{}, &run)
	return run.RunID, err
}

// waitRun polls the run every interval until it ends. Figures are taken
// from the rows, so the poll interval does not enter them.
func (c *client) waitRun(ctx context.Context, dagID, runID string, interval time.Duration) (*dagRun, error) {
	var run dagRun
	err := poll(ctx, interval, func() (bool, error) {
		_, err := c.do(ctx, http.MethodGet, "/dags/"+url.PathEscape(dagID)+"/dagRuns/"+url.PathEscape(runID), nil, &run)
		return err == nil && (run.State == "success" || run.State == "failed"), err
	})
	return &run, err
}

func (c *client) taskInstances(ctx context.Context, dagID, runID string) ([]taskInstance, error) {
	var all []taskInstance
	for offset := 0; ; offset += 1000 {
		var page struct {
			TaskInstances []taskInstance `json:"task_instances"`
			TotalEntries  int            `json:"total_entries"`
		}
		path := fmt.Sprintf("/dags/%s/dagRuns/%s/taskInstances?limit=1000&offset=%d", url.PathEscape(dagID), url.PathEscape(runID), offset)
		if _, err := c.do(ctx, http.MethodGet, path, nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.TaskInstances...)
		if len(page.TaskInstances) == 0 || len(all) >= page.TotalEntries {
			return all, nil
		}
	}
}

// waitTriggers waits until the run's n task instances are deferred and
// one triggerer runs all n triggers, and returns how long after the
// trigger request that was. It fails when that takes longer than lead,
// the first trigger's delta: fires would then overlap the deferrals.
func (c *client) waitTriggers(ctx context.Context, dag, runID string, n int, lead time.Duration) (time.Duration, error) {
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(ctx, lead)
	defer cancel()
	deferred := fmt.Sprintf("/dags/%s/dagRuns/%s/taskInstances?state=deferred&limit=1", url.PathEscape(dag), url.PathEscape(runID))
	err := poll(ctx, 250*time.Millisecond, func() (bool, error) {
		var tis struct {
			TotalEntries int `json:"total_entries"`
		}
		if _, err := c.do(ctx, http.MethodGet, deferred, nil, &tis); err != nil || tis.TotalEntries < n {
			return false, err
		}
		var trs struct {
			Triggers []struct {
				TriggererID string `json:"triggerer_id"`
			} `json:"triggers"`
			TotalEntries int `json:"total_entries"`
		}
		if _, err := c.do(ctx, http.MethodGet, "/triggers?limit=1", nil, &trs); err != nil || len(trs.Triggers) == 0 ||
			trs.Triggers[0].TriggererID == "" {
			return false, err
		}
		_, err := c.do(ctx, http.MethodGet, "/triggers?limit=1&triggerer_id="+url.QueryEscape(trs.Triggers[0].TriggererID), nil, &trs)
		return err == nil && trs.TotalEntries >= n, err
	})
	if errors.Is(err, context.DeadlineExceeded) {
		return 0, fmt.Errorf("%d triggers were not all waiting within -defer-lead %s, before the first fire (raise it)", n, lead)
	}
	return time.Since(t0), err
}

// withDatabase returns dsn with its database name replaced.
func withDatabase(dsn, name string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("parse dsn: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

func numCPU() int { return runtime.NumCPU() }

func goVersion() string { return runtime.Version() }
