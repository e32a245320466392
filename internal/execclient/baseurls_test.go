package execclient

import "testing"

// A task's in-task CLI is given every api-server, the one in use first, so
// it moves to another when that one goes away, as the worker does.
func TestBaseURLsForTasks(t *testing.T) {
	t.Parallel()
	c := NewClient("http://a/execution, http://b/execution/", "tok", ClientOptions{})
	if got := c.BaseURLs(); got != "http://a/execution,http://b/execution" {
		t.Errorf("BaseURLs = %q", got)
	}
	i, _ := c.ep.current()
	c.ep.failed(i)
	if got := c.BaseURLs(); got != "http://b/execution,http://a/execution" {
		t.Errorf("after a failure: BaseURLs = %q, want b first", got)
	}
	env := map[string]string{EnvAPIURL: c.BaseURLs(), EnvToken: "tok"}
	tc, err := clientFromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil || tc.BaseURL() != "http://b/execution" || tc.opts.Retries != inTaskRetries || tc.opts.RetryFor != inTaskRetryFor {
		t.Errorf("in-task client: %v, base %q, retries %d for %s", err, tc.BaseURL(), tc.opts.Retries, tc.opts.RetryFor)
	}
}
