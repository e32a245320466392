package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/tasklog"
)

func TestTaskLogs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	path := tiBase + "/extract/logs/"
	key := tasklog.Key{DagID: "etl", RunID: "r1", TaskID: "extract", MapIndex: -1, TryNumber: 1}

	// Nothing written yet: empty content, token 0.
	var c api.LogChunk
	e.must(http.StatusOK, core.RoleViewer, "GET", path+"1", nil, &c)
	if c.Content != "" || c.ContinuationToken != "0" {
		t.Errorf("before any output: %+v", c)
	}
	if err := tasklog.Append(e.logs, key, []byte("line one\n")); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", path+"1", nil, &c)
	if c.Content != "line one\n" || c.ContinuationToken != "9" {
		t.Errorf("first read: %+v", c)
	}
	// Tail: the token returns only what was appended since.
	if err := tasklog.Append(e.logs, key, []byte("line two\n")); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", path+"1?token="+c.ContinuationToken, nil, &c)
	if c.Content != "line two\n" || c.ContinuationToken != "18" {
		t.Errorf("tail read: %+v", c)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", path+"1?token=18", nil, &c)
	if c.Content != "" || c.ContinuationToken != "18" {
		t.Errorf("read at end: %+v", c)
	}

	resp := e.request(core.RoleViewer, "GET", path+"1?token=9", nil, "Accept", "text/plain")
	defer func() { _ = resp.Body.Close() }()
	var sb strings.Builder
	buf := make([]byte, 64)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") ||
		sb.String() != "line two\n" || resp.Header.Get(api.LogTokenHeader) != "18" {
		t.Errorf("text/plain: %d %q %q token %q", resp.StatusCode, resp.Header.Get("Content-Type"), sb.String(), resp.Header.Get(api.LogTokenHeader))
	}

	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", path+"2", nil, "try_number 2", "current try is 1")
	e.mustProblem(http.StatusBadRequest, core.RoleViewer, "GET", path+"1?token=abc", nil, `token: "abc"`)
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", tiBase+"/nope/logs/1", nil, `task_id "nope"`)
	e.mustProblem(http.StatusUnauthorized, core.RolePublic, "GET", path+"1", nil, "authentication required")
}
