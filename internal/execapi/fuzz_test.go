package execapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
)

// FuzzStateRequest sends a running try's task-state requests with arbitrary
// keys and bodies to a real Execution API: whatever arrives, the answer is a
// client error or a success, never a server error, and a key the API
// accepted can be read back.
func FuzzStateRequest(f *testing.F) {
	f.Add("k", []byte(`{"value": 1}`))
	f.Add("k", []byte(`{"value": {"a": [1, "x"]}, "retention": "1h"}`))
	f.Add("..", []byte(`{"value": 1}`))
	f.Add("a/b", []byte(`{"value": 1}garbage`))
	f.Add("\x00", []byte(`{"value": "\ud800"}`))
	f.Add("k", []byte(`{"value": NaN}`))
	f.Add("k", []byte(`{"value": 1, "retention": 5}`))
	f.Add("k", []byte("\xff"))
	env := execapitest.New(f, execapi.Config{})
	_, tis := env.SeedRun(f, core.DAG{DagID: "fz", Tasks: []core.Task{{TaskID: "a", Operator: "noop"}}}, "r", core.TIRunning)
	token, err := env.Tokens.IssueExecution(tis[0].ID)
	if err != nil {
		f.Fatal(err)
	}
	do := func(t *testing.T, method, key string, body []byte) (int, []byte) {
		req, err := http.NewRequestWithContext(context.Background(), method,
			env.URL+"/store/ti/"+tis[0].ID+"/"+url.PathEscape(key), bytes.NewReader(body))
		if err != nil {
			t.Skip() // not a request a client could send
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	f.Fuzz(func(t *testing.T, key string, body []byte) {
		if len(key) == 0 || len(key) > 600 || len(body) > 4096 {
			return
		}
		status, answer := do(t, http.MethodPut, key, body)
		if status >= 500 {
			t.Fatalf("PUT key %q body %q: %d %s", key, body, status, answer)
		}
		if status >= 300 {
			return
		}
		if status, answer = do(t, http.MethodGet, key, nil); status != http.StatusOK {
			t.Fatalf("key %q was stored but GET answers %d %s", key, status, answer)
		}
	})
}
