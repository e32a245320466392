package execapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
)

// docs/architecture.md#versions: every answer names the server's Execution
// API version; a client of another version outside the supported window is
// refused before any handler runs, naming both versions and which side to
// upgrade; no header means the server's own version.
func TestAPIVersionWindow(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	for _, c := range []struct {
		sent   string
		status int
		detail []string
	}{
		{"", http.StatusOK, nil},
		{execclient.APIVersion, http.StatusOK, nil},
		{"2026-12-01", http.StatusOK, nil}, // a worker from before callbacks still claims tries
		{"2999-01-01", http.StatusBadRequest, []string{"speaks Execution API 2999-01-01, newer", execclient.APIVersion, "upgrade the api-servers first"}},
		{"2020-01-01", http.StatusBadRequest, []string{"speaks Execution API 2020-01-01, older", execclient.OldestAPIVersion, "upgrade the workers"}},
		{"v2", http.StatusBadRequest, []string{`"v2" is not a version`}},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, env.URL+"/health", nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.sent != "" {
			req.Header.Set(execclient.APIVersionHeader, c.sent)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var p execclient.Problem
		_ = json.NewDecoder(resp.Body).Decode(&p)
		_ = resp.Body.Close()
		if resp.StatusCode != c.status || resp.Header.Get(execclient.APIVersionHeader) != execclient.APIVersion {
			t.Errorf("version %q: %d with server version %q, want %d and %s", c.sent, resp.StatusCode,
				resp.Header.Get(execclient.APIVersionHeader), c.status, execclient.APIVersion)
		}
		for _, d := range c.detail {
			if !strings.Contains(p.Detail, d) {
				t.Errorf("version %q: detail %q lacks %q", c.sent, p.Detail, d)
			}
		}
		if c.status == http.StatusBadRequest && strings.HasPrefix(c.sent, "2") && p.Reason != execclient.ReasonUnsupportedVersion {
			t.Errorf("version %q: reason %q, want %s", c.sent, p.Reason, execclient.ReasonUnsupportedVersion)
		}
	}
	// The real client sends its version and is served.
	if err := env.WorkerClient(t, "w1").Health(t.Context()); err != nil {
		t.Errorf("health through the client: %v", err)
	}
}
