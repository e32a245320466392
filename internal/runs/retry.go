package runs

import (
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// DefaultMaxRetryDelay caps exponential back-off when a task sets no
// max_retry_delay (Airflow's default: one day).
const DefaultMaxRetryDelay = 24 * time.Hour

// NextRetryAt returns when the next try of task may start after try number
// try (1-based) failed at now. It is the one rule for retry back-off: the
// Execution API uses it when a worker reports up_for_retry and the scheduler
// uses it when it fails a try whose worker died.
//
// The delay is the task's retry_delay; with retry_exponential_backoff it is
// retry_delay * 2^(try-1), capped by max_retry_delay (or DefaultMaxRetryDelay
// when unset). Unlike Airflow no random jitter is added, so the result is
// deterministic.
func NextRetryAt(task *core.Task, try int, now time.Time) time.Time {
	delay := task.RetryDelay.D()
	if delay < 0 {
		delay = 0
	}
	if task.RetryExponentialBackoff && delay > 0 {
		limit := task.MaxRetryDelay.D()
		if limit <= 0 {
			limit = DefaultMaxRetryDelay
		}
		for i := 1; i < try && delay < limit; i++ {
			delay *= 2
		}
		delay = min(delay, limit)
	} else if m := task.MaxRetryDelay.D(); m > 0 && delay > m {
		delay = m
	}
	return now.Add(delay)
}

// Failure says how a failed try failed, where that decides what follows.
type Failure uint8

const (
	// FailedItself is the task's own failure: retried while tries remain.
	FailedItself Failure = iota
	// FailedForGood is a try that failed for good (no_retry: Airflow's
	// AirflowFailException and AirflowSensorTimeout); no retry.
	FailedForGood
	// Interrupted is a try its worker stopped as it shut down, through no fault
	// of the task; it is retried at once, and the try does not count
	// against its retries (the caller adds one to max_tries, as Airflow
	// does for a running try that is cleared) — MaxRefunds times at most
	// for an instance: past them it is FailedItself (Refunds).
	Interrupted
)

// MaxRefunds bounds the tries of one instance an interruption refunds: a
// task whose runs make their workers stop (a pod evicted for what the task
// fills) would else be retried for ever, its retries never spent.
const MaxRefunds = 3

// TriesLeft reports whether a failure of ti's current try is retried (its
// own failure: Outcome).
func TriesLeft(ti *core.TaskInstance) bool { return ti.TryNumber < ti.MaxTries }

// Refunds reports whether a try of ti that failed as how is refunded: an
// interruption, while ti has had fewer than MaxRefunds.
func Refunds(ti *core.TaskInstance, how Failure) bool {
	return how == Interrupted && ti.Interruptions < MaxRefunds
}

// Outcome is how a try ends that reported reported at now: success and
// skipped stand; failed (or up_for_retry) becomes up_for_retry with the
// time of the next try when tries remain (ti.TryNumber < ti.MaxTries) and
// the try did not fail for good, else failed; an interrupted try is
// retried at once (see Failure). It is the one retry decision: a worker's
// report and a dead worker's try both go through it. task nil (no longer
// in the DAG) retries at once. Any other reported state, or a failure
// kind with success or skipped, wraps core.ErrInvalid.
func Outcome(task *core.Task, ti *core.TaskInstance, reported core.TIState, how Failure, now time.Time) (core.TIState, *time.Time, error) {
	if err := CheckReported(reported); err != nil {
		return "", nil, err
	}
	if reported == core.TISuccess || reported == core.TISkipped {
		switch how {
		case FailedItself:
		case FailedForGood:
			return "", nil, fmt.Errorf("no_retry goes with state failed, not %s: %w", reported, core.ErrInvalid)
		case Interrupted:
			return "", nil, fmt.Errorf("interrupted goes with state failed, not %s: %w", reported, core.ErrInvalid)
		}
		return reported, nil, nil
	}
	if Refunds(ti, how) {
		return core.TIUpForRetry, &now, nil
	}
	if how == FailedForGood || !TriesLeft(ti) {
		return core.TIFailed, nil, nil
	}
	next := now
	if task != nil {
		next = NextRetryAt(task, ti.TryNumber, now)
	}
	return core.TIUpForRetry, &next, nil
}

// TimeoutEndsSensor reports whether a deferral timeout ends task, a task
// of spec, for good (Airflow's AirflowSensorTimeout: no retry, or a skip
// with soft_fail): task is a sensor waiting for its event. A sensor that
// produces a stream (one a task iterates over, or a streaming operator)
// is retried as any failure: its retry resumes the stream where it
// stopped (docs/streaming.md).
func TimeoutEndsSensor(spec *core.DAG, task *core.Task) bool {
	return task != nil && task.Operator == "sensor" && !task.HandlesStream() && !spec.Iterated(task.TaskID)
}

// CheckReported returns nil when a worker may report a try ending in state
// (success, failed, skipped or up_for_retry); else an error wrapping
// core.ErrInvalid that names the allowed states.
func CheckReported(state core.TIState) error {
	if state == core.TISuccess || state == core.TIFailed || state == core.TISkipped || state == core.TIUpForRetry {
		return nil
	}
	return fmt.Errorf("state must be success, failed, skipped or up_for_retry, got %q: %w", state, core.ErrInvalid)
}
