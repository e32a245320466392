package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/weirflow/weir"
)

// resumeExternalJobDAG submits a job to the example job service
// (examples/jobservice) with weir.RunResumable: if the worker dies while the
// job runs, the retry reconnects to the same job instead of submitting
// another. The YAML version is examples/dags/resume_external_job.yaml.
func resumeExternalJobDAG() *weir.DAG {
	dag := weir.NewDAG("go_resume_external_job",
		weir.Description("Submit a remote job once; a retry after a worker loss reconnects to it."),
		weir.Tags("example", "go", "task-state"),
		weir.Params(map[string]any{"job_service": "http://127.0.0.1:8765", "job_seconds": 10}),
	)
	dag.Go("run_job", func(ctx context.Context, tc *weir.TaskContext) (any, error) {
		base, err := weir.ParamAs[string](tc, "job_service")
		if err != nil {
			return nil, err
		}
		seconds, err := weir.ParamAs[float64](tc, "job_seconds")
		if err != nil {
			return nil, err
		}
		job := &remoteJob{base: strings.TrimRight(base, "/"), seconds: seconds, tc: tc,
			http: &http.Client{Timeout: 30 * time.Second}}
		return weir.RunResumable(ctx, tc, job)
	}, weir.Retries(2), weir.RetryDelay(time.Second))
	return dag
}

// jobStatus is a job as the job service reports it.
type jobStatus struct {
	ID    string `json:"id"`
	State string `json:"state"` // running, succeeded or failed
}

func (s jobStatus) String() string { return s.State }

// remoteJob is a weir.ResumableJob over the job service's HTTP API.
type remoteJob struct {
	base    string
	seconds float64
	tc      *weir.TaskContext
	http    *http.Client
}

// Submit starts a job of j.seconds.
func (j *remoteJob) Submit(ctx context.Context) (string, error) {
	var st jobStatus
	body := fmt.Sprintf(`{"seconds": %g}`, j.seconds)
	if err := j.call(ctx, http.MethodPost, "/jobs", body, http.StatusCreated, &st); err != nil {
		return "", err
	}
	return st.ID, nil
}

// Status asks the service for the job; a 404 is weir.ErrJobNotFound.
func (j *remoteJob) Status(ctx context.Context, id string) (jobStatus, error) {
	var st jobStatus
	err := j.call(ctx, http.MethodGet, "/jobs/"+id, "", http.StatusOK, &st)
	if err == nil {
		j.tc.Logger.Info("job status", "job_id", id, "state", st.State)
	}
	return st, err
}

// IsActive reports whether the job still runs.
func (j *remoteJob) IsActive(s jobStatus) bool { return s.State == "running" }

// IsSucceeded reports whether the job succeeded.
func (j *remoteJob) IsSucceeded(s jobStatus) bool { return s.State == "succeeded" }

// PollUntilComplete asks for the status every second until the job ends.
func (j *remoteJob) PollUntilComplete(ctx context.Context, id string) (jobStatus, error) {
	return weir.PollStatus[jobStatus](ctx, j, id, time.Second)
}

// Result fetches a succeeded job's output.
func (j *remoteJob) Result(ctx context.Context, id string) (any, error) {
	var out map[string]any
	err := j.call(ctx, http.MethodGet, "/jobs/"+id+"/result", "", http.StatusOK, &out)
	return out, err
}

// call sends a request to the job service and decodes a want-status answer
// into out; 404 becomes weir.ErrJobNotFound.
func (j *remoteJob) call(ctx context.Context, method, path, body string, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, j.base+path, strings.NewReader(body))
	if err != nil {
		return fmt.Errorf("job service %s %s: %w", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := j.http.Do(req)
	if err != nil {
		return fmt.Errorf("job service %s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return fmt.Errorf("job service %s %s: read answer: %w", method, path, err)
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("job service %s %s: %s: %w", method, path, strings.TrimSpace(string(b)), weir.ErrJobNotFound)
	case resp.StatusCode != want:
		return fmt.Errorf("job service %s %s: status %d: %s", method, path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("job service %s %s: decode %s: %w", method, path, b, err)
	}
	return nil
}
