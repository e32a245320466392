package weir

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrJobNotFound is what a ResumableJob's Status returns (or wraps) when the
// external system no longer knows a job id. RunResumable then submits the
// job again; any other Status error fails the try without resubmitting, so a
// network blip never starts a second job.
var ErrJobNotFound = errors.New("external job not found")

// ErrJobFailed is wrapped by the error RunResumable returns when the external
// job ended without succeeding. The job id stays in task state, so the next
// try sees the failed job and submits a new one.
var ErrJobFailed = errors.New("external job did not succeed")

// DefaultJobIDKey is the task-state key under which RunResumable keeps the
// external job id (change it with JobIDKey).
const DefaultJobIDKey = "job_id"

// ResumableJob is the contract of a long-running job in an external system
// (a Spark, Databricks or Glue job, a remote batch) that a Go task drives with
// RunResumable so that a retry reconnects to the job instead of starting it
// again (docs/requirements.md#r-1; Airflow's ResumableJobMixin). S is the job's status as the
// external system reports it.
type ResumableJob[S any] interface {
	// Submit starts a new job and returns its id.
	Submit(ctx context.Context) (jobID string, err error)
	// Status asks the external system for the job's status. It returns an
	// error wrapping ErrJobNotFound when the system does not know jobID.
	Status(ctx context.Context, jobID string) (S, error)
	// IsActive reports whether the job is still queued or running.
	IsActive(status S) bool
	// IsSucceeded reports whether the job finished successfully.
	IsSucceeded(status S) bool
	// PollUntilComplete waits until the job is no longer active and returns
	// its final status; PollStatus is a ready implementation.
	PollUntilComplete(ctx context.Context, jobID string) (S, error)
	// Result fetches the output of a succeeded job; it becomes the task's
	// return value.
	Result(ctx context.Context, jobID string) (any, error)
}

// ResumableOption changes how RunResumable keeps the job id.
type ResumableOption func(*resumableConfig)

type resumableConfig struct {
	key            string
	clearOnSuccess bool
}

// JobIDKey stores the job id under key instead of DefaultJobIDKey: needed
// when one task drives several jobs.
func JobIDKey(key string) ResumableOption {
	return func(c *resumableConfig) { c.key = key }
}

// ClearJobIDOnSuccess deletes the job id from task state once the job's
// result has been read. By default the id is kept, so the UI and API show
// which external job produced the task's result (and [state_store]
// clear_on_success or a clear of the task instance removes it).
func ClearJobIDOnSuccess() ResumableOption {
	return func(c *resumableConfig) { c.clearOnSuccess = true }
}

// RunResumable runs job to completion and returns its result, surviving the
// loss of a worker (docs/requirements.md#r-1). It looks up the job id an earlier try stored
// in task state and then:
//
//   - no id: Submit, store the id (NeverExpire) before waiting, then
//     PollUntilComplete;
//   - the job is still active: reconnect and PollUntilComplete, without
//     submitting again;
//   - the job already succeeded: return its Result, without polling or
//     submitting;
//   - the job ended without success, or Status returns ErrJobNotFound: Submit
//     a new job and overwrite the stored id.
//
// Any other Status error fails the try and leaves the id in place. A job that
// ends without success fails the try with an error wrapping ErrJobFailed.
// The id stays in task state after success unless ClearJobIDOnSuccess is
// given. The decisions are written to the task log.
func RunResumable[S any](ctx context.Context, tc *TaskContext, job ResumableJob[S], opts ...ResumableOption) (any, error) {
	cfg := resumableConfig{key: DefaultJobIDKey}
	for _, o := range opts {
		o(&cfg)
	}
	jobID, found, err := GetState[string](ctx, tc, cfg.key)
	if err != nil {
		return nil, fmt.Errorf("look up the external job id: %w", err)
	}
	if found {
		status, err := job.Status(ctx, jobID)
		switch {
		case errors.Is(err, ErrJobNotFound):
			tc.Logger.Info("external job of an earlier try is not found; submitting a new one", "job_id", jobID)
		case err != nil:
			return nil, fmt.Errorf("status of external job %s (from an earlier try): %w", jobID, err)
		case job.IsSucceeded(status):
			tc.Logger.Info("external job already succeeded; reading its result", "job_id", jobID)
			return finishResumable(ctx, tc, job, jobID, cfg)
		case job.IsActive(status):
			tc.Logger.Info("reconnecting to the running external job", "job_id", jobID, "status", fmt.Sprint(status))
			return pollResumable(ctx, tc, job, jobID, cfg)
		default:
			tc.Logger.Info("external job of an earlier try ended without success; submitting a new one",
				"job_id", jobID, "status", fmt.Sprint(status))
		}
	}
	jobID, err = job.Submit(ctx)
	if err != nil {
		return nil, fmt.Errorf("submit external job: %w", err)
	}
	if err := tc.TaskState().Set(ctx, cfg.key, jobID, NeverExpire); err != nil {
		return nil, fmt.Errorf("external job %s was submitted but its id could not be kept for a retry: %w", jobID, err)
	}
	tc.Logger.Info("submitted external job", "job_id", jobID)
	return pollResumable(ctx, tc, job, jobID, cfg)
}

// pollResumable waits for jobID to finish and returns its result.
func pollResumable[S any](ctx context.Context, tc *TaskContext, job ResumableJob[S], jobID string, cfg resumableConfig) (any, error) {
	status, err := job.PollUntilComplete(ctx, jobID)
	if err != nil {
		return nil, fmt.Errorf("wait for external job %s: %w", jobID, err)
	}
	if !job.IsSucceeded(status) {
		return nil, fmt.Errorf("external job %s ended with status %v: %w", jobID, status, ErrJobFailed)
	}
	tc.Logger.Info("external job succeeded", "job_id", jobID)
	return finishResumable(ctx, tc, job, jobID, cfg)
}

// finishResumable reads a succeeded job's result and, when asked, forgets
// its id.
func finishResumable[S any](ctx context.Context, tc *TaskContext, job ResumableJob[S], jobID string, cfg resumableConfig) (any, error) {
	res, err := job.Result(ctx, jobID)
	if err != nil {
		return nil, fmt.Errorf("result of external job %s: %w", jobID, err)
	}
	if cfg.clearOnSuccess {
		if err := tc.TaskState().Delete(ctx, cfg.key); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// PollStatus calls job.Status every interval until the job is no longer
// active (or ctx ends) and returns the last status: a PollUntilComplete for
// jobs whose system offers no blocking wait.
//
//	func (j *myJob) PollUntilComplete(ctx context.Context, id string) (string, error) {
//		return weir.PollStatus(ctx, j, id, 5*time.Second)
//	}
func PollStatus[S any](ctx context.Context, job ResumableJob[S], jobID string, interval time.Duration) (S, error) {
	if interval <= 0 {
		var zero S
		return zero, fmt.Errorf("poll external job %s: interval must be positive, got %s", jobID, interval)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		status, err := job.Status(ctx, jobID)
		if err != nil {
			return status, fmt.Errorf("poll external job %s: %w", jobID, err)
		}
		if !job.IsActive(status) {
			return status, nil
		}
		select {
		case <-ctx.Done():
			return status, fmt.Errorf("poll external job %s: %w", jobID, ctx.Err())
		case <-tick.C:
		}
	}
}
