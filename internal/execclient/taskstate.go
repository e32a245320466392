package execclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"
)

// TaskStateRequest is the body of PUT /execution/store/ti/{id}/{key}.
// Retention is "6h", "7d", "never", or absent for [state_store]
// default_retention_days; the server computes expires_at with its own clock
// at the time of the write.
type TaskStateRequest struct {
	Value     json.RawMessage `json:"value"`
	Retention json.RawMessage `json:"retention,omitempty"`
}

// TaskStateResponse is one task-state entry (GET, and the answer to PUT).
type TaskStateResponse struct {
	Key          string          `json:"key"`
	Value        json.RawMessage `json:"value"`
	UpdatedAt    time.Time       `json:"updated_at"`
	UpdatedByRun string          `json:"updated_by_run"`
	UpdatedByTry int             `json:"updated_by_try"`
	ExpiresAt    *time.Time      `json:"expires_at"`
	NeverExpire  bool            `json:"never_expire"`
}

// taskStatePath is the path of the client's own task state (key "" = the
// whole scope).
func (c *Client) taskStatePath(key string) (string, error) {
	if c.Identity.TIID == "" {
		return "", errors.New("task state: the client has no task instance id (WEIR_TI_ID)")
	}
	p := "/store/ti/" + url.PathEscape(c.Identity.TIID)
	if key != "" {
		p += "/" + url.PathEscape(key)
	}
	return p, nil
}

// TaskStateEntry returns the client's own try's task-state entry of key
// with its metadata; an error matching core.ErrNotFound when absent.
func (c *Client) TaskStateEntry(ctx context.Context, key string) (*TaskStateResponse, error) {
	p, err := c.taskStatePath(key)
	if err != nil {
		return nil, err
	}
	var out TaskStateResponse
	if err := c.do(ctx, call{method: http.MethodGet, path: p, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// TaskStateGet returns the JSON value of key; an error matching
// core.ErrNotFound when absent.
func (c *Client) TaskStateGet(ctx context.Context, key string) (json.RawMessage, error) {
	e, err := c.TaskStateEntry(ctx, key)
	if err != nil {
		return nil, err
	}
	return e.Value, nil
}

// TaskStateSet writes value (JSON) under key with retention ("" = the
// server's default, "never", or a duration such as "6h" or "7d").
func (c *Client) TaskStateSet(ctx context.Context, key string, value json.RawMessage, retention string) error {
	p, err := c.taskStatePath(key)
	if err != nil {
		return err
	}
	req := TaskStateRequest{Value: value}
	if retention != "" {
		if req.Retention, err = json.Marshal(retention); err != nil {
			return err
		}
	}
	k, err := jsonCall(http.MethodPut, p, req, nil)
	if err != nil {
		return err
	}
	return c.do(ctx, k)
}

// TaskStateDelete deletes key (absent is fine).
func (c *Client) TaskStateDelete(ctx context.Context, key string) error {
	p, err := c.taskStatePath(key)
	if err != nil {
		return err
	}
	return c.do(ctx, call{method: http.MethodDelete, path: p})
}

// TaskStateClear deletes every key of the client's task instance (of every
// map index of its task with allMapIndices).
func (c *Client) TaskStateClear(ctx context.Context, allMapIndices bool) error {
	p, err := c.taskStatePath("")
	if err != nil {
		return err
	}
	k := call{method: http.MethodDelete, path: p}
	if allMapIndices {
		k.query = url.Values{"all_map_indices": {"true"}}
	}
	return c.do(ctx, k)
}
