package api_test

import (
	"net/http"
	"slices"
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

	// Nothing written yet: no line, token 0.
	read := func(query string, want []string, wantToken string) {
		t.Helper()
		var c api.LogChunk
		e.must(http.StatusOK, core.RoleViewer, "GET", path+"1"+query, nil, &c)
		token := "null"
		if c.ContinuationToken != nil {
			token = *c.ContinuationToken
		}
		if !slices.Equal(c.Content, want) || c.Content == nil || token != wantToken {
			t.Errorf("GET %s: content %q token %s, want %q token %s", query, c.Content, token, want, wantToken)
		}
	}
	read("", []string{}, "0")
	if err := tasklog.Append(e.logs, key, []byte("line one\n")); err != nil {
		t.Fatal(err)
	}
	read("", []string{"line one"}, "9")
	// Tail: the token returns only what was appended since; while the try
	// may still write, a line not ended yet waits for its end.
	if err := tasklog.Append(e.logs, key, []byte("line two\npart")); err != nil {
		t.Fatal(err)
	}
	read("?token=9", []string{"line two"}, "18")
	read("?token=18", []string{}, "18") // a line being written is left whole for later
	if err := tasklog.Append(e.logs, key, []byte("ial\nlast, not ended")); err != nil {
		t.Fatal(err)
	}
	read("?token=18", []string{"partial"}, "26")
	// A try that writes no more answers its last line unended, and no
	// token once read to its end (as Airflow: a client reads until null).
	e.setTIState("r1", "extract", core.TISuccess)
	read("?token=26", []string{"last, not ended"}, "null")
	read("?token=41", []string{}, "null")
	read("?token=9", []string{"line two", "partial", "last, not ended"}, "null")

	// A finished log longer than a read: each piece ends at a line break.
	long := tasklog.Key{DagID: "etl", RunID: "r1", TaskID: "transform", MapIndex: -1, TryNumber: 1}
	line := strings.Repeat("x", 99) + "\n"
	if err := tasklog.Append(e.logs, long, []byte(strings.Repeat(line, 11000))); err != nil {
		t.Fatal(err)
	}
	e.setTIState("r1", "transform", core.TISuccess)
	var lines []string
	token := "0"
	for pieces := 0; token != ""; pieces++ {
		var c api.LogChunk
		e.must(http.StatusOK, core.RoleViewer, "GET", tiBase+"/transform/logs/1?token="+token, nil, &c)
		lines = append(lines, c.Content...)
		token = ""
		if c.ContinuationToken != nil {
			token = *c.ContinuationToken
		}
		if pieces > 3 {
			t.Fatal("the log never ends")
		}
	}
	if len(lines) != 11000 || slices.ContainsFunc(lines, func(l string) bool { return len(l) != 99 }) {
		t.Errorf("read %d lines, some cut: want 11000 of 99 bytes", len(lines))
	}
	// full_content (Airflow's) reads all of it at once.
	var all api.LogChunk
	e.must(http.StatusOK, core.RoleViewer, "GET", tiBase+"/transform/logs/1?full_content=true", nil, &all)
	if len(all.Content) != 11000 || all.ContinuationToken != nil {
		t.Errorf("full_content: %d lines, token %v; want all 11000 and none", len(all.Content), all.ContinuationToken)
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
		sb.String() != "line two\npartial\nlast, not ended" || resp.Header.Get(api.LogTokenHeader) != "41" {
		t.Errorf("text/plain: %d %q %q token %q", resp.StatusCode, resp.Header.Get("Content-Type"), sb.String(), resp.Header.Get(api.LogTokenHeader))
	}

	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", path+"2", nil, "try_number 2", "current try is 1")
	e.mustProblem(http.StatusBadRequest, core.RoleViewer, "GET", path+"1?token=abc", nil, `token: "abc"`)
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", tiBase+"/nope/logs/1", nil, `task_id "nope"`)
	e.mustProblem(http.StatusUnauthorized, core.RolePublic, "GET", path+"1", nil, "authentication required")
}
