package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/tasklog"
)

// LogChunk is the JSON body of a log request, Airflow's
// TaskInstancesLogResponse: the lines of a piece of the log (without their
// line breaks) and the token to pass back to read on from where they end
// (tailing). A piece ends at a line break unless it holds the end of a
// try that writes no more: a line written in part, or cut by the size of
// a read, comes whole in a later piece (unless it is longer than a piece).
type LogChunk struct {
	Content []string `json:"content"`
	// ContinuationToken is null once a try that writes no more has been
	// read to its end, as Airflow's (a client reads until it is null).
	ContinuationToken *string `json:"continuation_token"`
}

// Text is the piece of the log the chunk's lines are, each line ended by
// a line break.
func (c LogChunk) Text() []byte {
	var b []byte
	for _, l := range c.Content {
		b = append(append(b, l...), '\n')
	}
	return b
}

// LogTokenHeader carries the continuation token on text/plain responses.
const LogTokenHeader = "Weir-Log-Continuation-Token" //nolint:gosec // a header name, not a credential

type logInput struct {
	TaskInstanceParam
	TryNumber int    `path:"try_number" minimum:"0" doc:"try number; 0 = the current try"`
	Token     string `query:"token" doc:"continuation_token of an earlier response: read on from there"`
	Full      bool   `query:"full_content" doc:"Airflow's: the whole log from token on (up to 16 MiB), not a piece of 1 MiB"`
	Accept    string `header:"Accept" doc:"text/plain for the raw log; JSON otherwise"`
}

type logOutput struct {
	ContentType string `header:"Content-Type"`
	Token       string `header:"Weir-Log-Continuation-Token"`
	Body        []byte
}

func (s *server) registerLogs() {
	register(s, core.RoleViewer, huma.Operation{
		OperationID: "get_log", Method: http.MethodGet,
		Path: Prefix + "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/logs/{try_number}", Tags: []string{"Task Instance"},
		Summary: "Get a try's log",
		Description: "Returns up to 1 MiB of the try's log from `token` on. As JSON (default), Airflow's shape: " +
			"`{\"content\": [\"line\", ...], \"continuation_token\": \"...\"}`, whole lines while the try runs; " +
			"with `Accept: text/plain` the raw text, the token in the " + LogTokenHeader + " header. Pass the token " +
			"back to tail a running task: an empty content means nothing new yet.",
		Errors:    []int{http.StatusBadRequest, http.StatusNotFound},
		Responses: s.logResponses(),
	}, s.getLog)
}

// logResponses declares a log route's answer, a LogChunk as JSON or the
// raw text with the token in a header (huma would describe the []byte
// body it writes as base64).
func (s *server) logResponses() map[string]*huma.Response {
	return map[string]*huma.Response{"200": {
		Description: "A piece of the log.",
		Headers: map[string]*huma.Param{LogTokenHeader: {Description: "where the piece ends: the token to read on from",
			Schema: &huma.Schema{Type: "string"}}},
		Content: map[string]*huma.MediaType{
			"application/json": {Schema: s.api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[LogChunk](), true, "LogChunk")},
			"text/plain":       {Schema: &huma.Schema{Type: "string"}},
		},
	}}
}

func (s *server) getLog(ctx context.Context, in *logInput) (*logOutput, error) {
	var offset int64
	if in.Token != "" {
		var err error
		if offset, err = strconv.ParseInt(in.Token, 10, 64); err != nil || offset < 0 {
			return nil, invalid(fmt.Sprintf("token: %q is not a continuation_token returned by this endpoint", in.Token))
		}
	}
	key, ti, err := s.svc.TaskLogKey(ctx, core.TIKey{DagID: in.DagID, RunID: in.RunID, TaskID: in.TaskID, MapIndex: in.MapIndex}, in.TryNumber)
	if err != nil {
		return nil, s.problem(ctx, err)
	}
	return s.logChunk(ctx, key, logRead{offset: offset, full: in.Full}, in.Accept, tasklog.TryWriting(ti, key))
}

// logRead is where a log is read from, and whether all of it is (up to
// maxFullLog) or a piece.
type logRead struct {
	offset int64
	full   bool
}

// maxFullLog bounds what a full_content read returns: the rest comes with
// the token.
const maxFullLog = 16 << 20

// read reads r from key's log: a piece, or pieces up to its end or
// maxFullLog.
func (r logRead) read(ctx context.Context, logs tasklog.Logs, key tasklog.Key) ([]byte, int64, error) {
	data, next, err := logs.Read(ctx, key, r.offset)
	for r.full && err == nil && len(data) < maxFullLog {
		more, after, err := logs.Read(ctx, key, next)
		if err != nil || after <= next {
			break // what was read stands; a failing later read ends it
		}
		data, next = append(data, more...), after
	}
	return data, next, err
}

// logChunk answers the log under key as from says, as text or as a JSON
// LogChunk (by accept), with the next offset as continuation token;
// writing says the log may still grow. A log not written (or shipped) yet
// is empty; one stored where this api-server cannot read it is a 404
// saying where it is (tasklog.MissingError).
func (s *server) logChunk(ctx context.Context, key tasklog.Key, from logRead, accept string, writing bool) (*logOutput, error) {
	data, next, err := from.read(ctx, s.cfg.Logs, key)
	if tasklog.WroteNothing(err) {
		data, next = nil, from.offset
	} else if err != nil {
		return nil, s.problem(ctx, err)
	}
	if wantsText(accept) {
		return &logOutput{ContentType: "text/plain; charset=utf-8", Token: strconv.FormatInt(next, 10), Body: data}, nil
	}
	// Whether the log holds more than this piece (a read stops at a size)
	// decides where a piece without a last line break ends, and whether
	// the end of a try that writes no more was reached (no token).
	beyond := false
	if !writing || len(data) > 0 && data[len(data)-1] != '\n' {
		size, err := s.cfg.Logs.Size(ctx, key)
		beyond = err != nil || size > next
	}
	lines, rest := tasklog.Lines(data, !writing, beyond)
	at := strconv.FormatInt(next-int64(rest), 10)
	chunk := LogChunk{Content: lines}
	if writing || beyond || rest > 0 {
		chunk.ContinuationToken = &at
	}
	body, err := json.Marshal(chunk)
	if err != nil {
		return nil, s.problem(ctx, fmt.Errorf("encode log chunk: %w", err))
	}
	return &logOutput{ContentType: "application/json", Token: at, Body: body}, nil
}

// wantsText reports whether the Accept header prefers text/plain over JSON.
func wantsText(accept string) bool {
	return strings.Contains(accept, "text/plain") && !strings.Contains(accept, "json")
}
