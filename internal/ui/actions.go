package ui

import (
	"net/http"
	"strconv"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
)

// Grid actions: what the grid's action form may ask for a run or a task.
const (
	actMarkSuccess = "mark_success"
	actMarkFailed  = "mark_failed"
	actClear       = "clear"
)

// markRun sets a whole run to success or failed through the service
// (service.MarkRun: its task instances follow Airflow's rule).
func (u *UI) markRun(w http.ResponseWriter, r *http.Request, req *request) {
	dagID, runID := r.PathValue("dag_id"), r.PathValue("run_id")
	if _, err := u.svc.MarkRun(r.Context(), actor(req), dagID, runID, core.DagRunState(r.PostFormValue("state"))); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	back(w, r, runPath(dagID, runID))
}

// gridAction carries out the grid's action form: mark or clear one run of
// the grid (task_id "") or one task in it, each through the same service
// method as the run and task-instance pages.
func (u *UI) gridAction(w http.ResponseWriter, r *http.Request, req *request) {
	dagID, runID, taskID := r.PathValue("dag_id"), r.PostFormValue("run_id"), r.PostFormValue("task_id")
	if runID == "" {
		u.fail(w, r, req, http.StatusBadRequest, "Choose a run (run_id is empty); nothing was changed.")
		return
	}
	var err error
	switch act := r.PostFormValue("action"); act {
	case actMarkSuccess, actMarkFailed:
		state := core.RunSuccess
		if act == actMarkFailed {
			state = core.RunFailed
		}
		if taskID != "" { // each of its instances, after the list of what changes
			if r.PostFormValue("listed") == "" { // the grid's form: its clear options are no mark's
				for _, clearOnly := range []string{"downstream", "only_failed", "keep_task_state"} {
					r.PostForm.Del(clearOnly)
				}
			}
			r.PostForm.Set("state", string(state))
			if !u.confirmedMark(w, r, req, dagID, runID, taskID) {
				return // the confirmation page, or the error's
			}
			break
		}
		_, err = u.svc.MarkRun(r.Context(), actor(req), dagID, runID, state)
	case actClear:
		if !u.confirmedClear(w, r, req, clearParams(r, dagID, runID)) {
			return // the confirmation page, or the error's
		}
	default:
		u.fail(w, r, req, http.StatusBadRequest, "action must be one of "+actMarkSuccess+", "+actMarkFailed+", "+actClear+
			", not "+strconv.Quote(act)+"; nothing was changed.")
		return
	}
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	back(w, r, "/dags/"+pathEscape(dagID))
}

// clearParams reads a clear form's options (task_id, downstream,
// only_failed, keep_task_state) for one run.
func clearParams(r *http.Request, dagID, runID string) service.ClearParams {
	p := service.ClearParams{DagID: dagID, RunID: runID, Downstream: r.PostFormValue("downstream") == "true",
		OnlyFailed: r.PostFormValue("only_failed") == "true", KeepTaskState: r.PostFormValue("keep_task_state") == "true"}
	if t := r.PostFormValue("task_id"); t != "" {
		p.TaskIDs = []string{t}
	}
	return p
}

// runPath is a run's page.
func runPath(dagID, runID string) string {
	return "/dags/" + pathEscape(dagID) + "/runs/" + pathEscape(runID)
}
