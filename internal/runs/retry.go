package runs

import (
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
