package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// docs/requirements.md#ts-6, #ts-7, #ts-3 and the audit log: the REST API lists keys with
// their metadata, reads, writes (op or admin), deletes and clears them;
// every change is audited; bad input is refused and changes nothing.
func TestTaskStateREST(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.trigger("r1")
	base := "/api/v2/dags/etl/dagRuns/r1/taskInstances/extract/state-store"

	var list api.StateCollection
	e.must(http.StatusOK, core.RoleViewer, "GET", base, nil, &list)
	if list.TotalEntries != 0 || len(list.Entries) != 0 {
		t.Fatalf("empty list = %+v", list)
	}
	e.mustProblem(http.StatusForbidden, core.RoleViewer, "PUT", base+"/k", map[string]any{"value": 1})

	var got core.StateEntry
	e.must(http.StatusOK, core.RoleOp, "PUT", base+"/progress", `{"value": {"rows": 10, "status": "running"}, "retention": "6h"}`, &got)
	now := e.clk.Now()
	if string(got.Value) != `{"rows":10,"status":"running"}` || got.ExpiresAt == nil || !got.ExpiresAt.Equal(now.Add(6*60*60*1e9)) ||
		got.UpdatedBy != core.UserWriter("op") || got.Scope.MapIndex != -1 || got.Scope.TaskID != "extract" {
		t.Errorf("PUT answer = %+v", got)
	}
	e.must(http.StatusOK, core.RoleAdmin, "PUT", base+"/job", `{"value": 12345678901234567890, "retention": "never"}`, nil)
	if !e.hasAudit("op", "task_state.set", "etl/r1/extract") || !e.hasAudit("admin", "task_state.set", "etl/r1/extract") {
		t.Errorf("audit log lacks the sets: %+v", e.audit())
	}

	e.must(http.StatusOK, core.RoleViewer, "GET", base, nil, &list)
	if list.TotalEntries != 2 || list.Entries[0].Key != "job" || string(list.Entries[0].Value) != "12345678901234567890" ||
		!list.Entries[0].NeverExpire || list.Entries[0].ExpiresAt != nil || list.Entries[1].Key != "progress" ||
		list.Entries[1].UpdatedAt.IsZero() {
		t.Errorf("list = %+v", list)
	}
	e.must(http.StatusOK, core.RoleViewer, "GET", base+"/job", nil, &got)
	if string(got.Value) != "12345678901234567890" {
		t.Errorf("GET job = %s, want the integer with every digit", got.Value)
	}
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", base+"/absent", nil, `no task state key "absent" for task instance etl/r1/extract`)
	e.mustProblem(http.StatusNotFound, core.RoleViewer, "GET", "/api/v2/dags/etl/dagRuns/r1/taskInstances/nope/state-store", nil, `task_id "nope"`)

	before := len(e.audit())
	for body, want := range map[string]string{
		`{"value": null}`:                "null cannot be stored",
		`{"value": NaN}`:                 "NaN or Infinity",
		`{"value": 1e999}`:               "out of range",
		`{"value": 1, "retention": 7}`:   "retention must be a string",
		`{"value": 1, "retention": "7"}`: "is not a duration",
		`{"retention": "6h"}`:            "a value is required",
		// Issue 13 finding 6: the same rules as the Execution API.
		"{\"value\": \"caf\xe9\"}": "not valid UTF-8",
		`{"value": "\udc00"}`:      "half of a UTF-16 surrogate pair",
		`{"value": ` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`: "nests deeper than 10000 levels",
		`{"value": 1}garbage`: "",
		`{"valu": 1}`:         `unknown field "valu"`,
	} {
		e.mustProblem(http.StatusBadRequest, core.RoleOp, "PUT", base+"/progress", body, want)
	}
	for key, want := range map[string]string{
		"a%00b":  "control character U+0000",
		"a%7Fb":  "control character U+007F",
		"%FF":    "not valid UTF-8",
		"%2e%2e": `state key ".." is not allowed`,
		"%2e":    `state key "." is not allowed`,
	} {
		e.mustProblem(http.StatusBadRequest, core.RoleOp, "PUT", base+"/"+key, `{"value": 1}`, want)
	}
	e.mustProblem(http.StatusRequestEntityTooLarge, core.RoleOp, "PUT", base+"/progress",
		`{"value": "`+strings.Repeat("x", 65536)+`"}`, "over the limit of 65536 bytes ([state_store] max_value_bytes)")
	e.must(http.StatusOK, core.RoleViewer, "GET", base+"/progress", nil, &got)
	if string(got.Value) != `{"rows":10,"status":"running"}` || len(e.audit()) != before {
		t.Errorf("refused writes changed the value (%s) or the audit log (%d → %d entries)", got.Value, before, len(e.audit()))
	}

	e.must(http.StatusNoContent, core.RoleOp, "DELETE", base+"/job", nil, nil)
	e.must(http.StatusNoContent, core.RoleOp, "DELETE", base+"/job", nil, nil) // absent: still fine
	e.must(http.StatusNoContent, core.RoleOp, "DELETE", base+"?all_map_indices=true", nil, nil)
	e.must(http.StatusOK, core.RoleViewer, "GET", base, nil, &list)
	if list.TotalEntries != 0 {
		t.Errorf("after delete and clear: %+v", list)
	}
	if !e.hasAudit("op", "task_state.delete", "etl/r1/extract") || !e.hasAudit("op", "task_state.clear", "etl/r1/extract") {
		t.Errorf("audit log lacks delete and clear: %+v", e.audit())
	}
}

// docs/requirements.md#ts-5: the REST clear endpoints delete the cleared instances' task
// state unless keep_task_state is true.
func TestClearKeepsTaskStateOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.trigger("r1")
	e.setTIState("r1", "extract", core.TIFailed)
	has := func() bool {
		_, err := e.st.StateGet(ctx, core.TaskScope("etl", "r1", "extract", -1), "k")
		return err == nil
	}
	if err := e.st.StateSet(ctx, &store.StateSetParams{Scope: core.TaskScope("etl", "r1", "extract", -1), Key: "k",
		Value: json.RawMessage(`1`), Now: e.clk.Now(), By: core.UserWriter("")}); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/dags/etl/clearTaskInstances",
		map[string]any{"dag_run_id": "r1", "dry_run": false, "keep_task_state": true}, nil)
	if !has() {
		t.Fatal("keep_task_state: true deleted the task state")
	}
	e.setTIState("r1", "extract", core.TIFailed)
	e.must(http.StatusOK, core.RoleOp, "POST", "/api/v2/dags/etl/dagRuns/r1/clear", map[string]any{"dry_run": false}, nil)
	if has() {
		t.Error("a clear without keep_task_state kept the task state")
	}
}
