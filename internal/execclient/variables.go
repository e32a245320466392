package execclient

import (
	"context"
	"net/http"
	"net/url"
)

// Variable is what GET /variables/{key} answers.
type Variable struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Variable returns the value of the variable key; an error matching
// core.ErrNotFound when there is none.
func (c *Client) Variable(ctx context.Context, key string) (string, error) {
	var out Variable
	if err := c.do(ctx, call{method: http.MethodGet, path: "/variables/" + url.PathEscape(key), out: &out}); err != nil {
		return "", err
	}
	return out.Value, nil
}
