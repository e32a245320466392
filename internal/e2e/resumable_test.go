package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/jobservicetest"
)

// TestResumeExternalJobSurvivesSIGKILL runs examples/dags/resume_external_job.yaml
// against the example job service and SIGKILLs standalone while try 1 polls
// the remote job (docs/requirements.md#r-1, with TS-1 and TS-3's never-expire). After a
// restart the orphaned try is failed by its missing heartbeats, and try 2
// finds the job id in task state and reconnects to the same job: the
// service saw exactly one submission, and the run succeeds with that job's
// result.
func TestResumeExternalJobSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	svc := jobservicetest.Start(t)
	dags, home := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "resume_external_job.yaml"), readFile(t, filepath.Join(examplesDir(), "resume_external_job.yaml")))
	env := []string{"WEIR__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT=5s"}
	const dag, runID, task = "resume_external_job", "resume", "run_job"
	// The job runs for an hour unless the test finishes it: whether it is
	// still running when try 2 starts does not depend on timing.
	conf := map[string]any{"job_service": svc.URL, "job_seconds": 3600}

	s := startStandalone(t, home, dags, env...)
	s.api.WaitDAG(dag)
	s.api.Trigger(dag, runID, conf)
	s.api.waitLog(dag, runID, task, 1, "job job-1: running") // submitted, id kept, polling
	if v, ok := s.api.stateValue(dag, runID, task, "job_id"); !ok || string(v.Value) != `"job-1"` || !v.NeverExpire {
		t.Fatalf("job_id in task state = %+v (found %t), want \"job-1\" never expiring", v, ok)
	}

	s.Signal(t, syscall.SIGKILL) // the worker dies mid-poll; the remote job keeps running
	s.WaitExit(t)
	s = startStandalone(t, home, dags, env...)
	log2 := s.api.waitLog(dag, runID, task, 2, "reconnecting to job-1")
	if strings.Contains(log2, "submitted") {
		t.Errorf("try 2 submitted a job:\n%s", log2)
	}
	svc.Finish("job-1", "succeeded")
	s.api.WaitRunSuccess(dag, runID)

	if n, jobs := svc.Submissions(); n != 1 {
		t.Errorf("the job service saw %d submissions (%v), want 1: the retry must reconnect", n, jobs)
	}
	tries := s.api.Tries(dag, runID, task)
	if len(tries) != 2 || !failedTry(tries[0]) || tries[1].State != core.TISuccess {
		t.Errorf("tries of %s = %+v, want try 1 failed (dead worker) and try 2 success", task, tries)
	}
	var x core.XCom
	s.api.Get(runPath(dag, runID)+"/taskInstances/"+task+"/xcomEntries/return_value", &x)
	var result struct {
		JobID string `json:"job_id"`
		Rows  int    `json:"rows"`
	}
	if err := json.Unmarshal(x.Value, &result); err != nil || result.JobID != "job-1" || result.Rows != 1000 {
		t.Errorf("return value %s (%v), want the result of job-1", x.Value, err)
	}
}
