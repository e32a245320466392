package execapi

import (
	"crypto/sha1" //nolint:gosec // not for security: Airflow's deterministic jitter
	"encoding/binary"
	"math"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// RetryPolicy is the part of a task that decides retry delays.
type RetryPolicy struct {
	Delay       time.Duration
	Exponential bool
	MaxDelay    time.Duration // 0 = uncapped
}

// RetryPolicyOf returns a task's retry policy.
func RetryPolicyOf(t *core.Task) RetryPolicy {
	return RetryPolicy{Delay: t.RetryDelay.D(), Exponential: t.RetryExponentialBackoff, MaxDelay: t.MaxRetryDelay.D()}
}

// maxDelay caps any delay so that durations never overflow.
const maxDelay = 100 * 365 * 24 * time.Hour

// RetryDelay is how long after a failed try tryNumber (1-based) the next try
// may start, as Airflow computes it: the fixed delay, or with exponential
// backoff delay*2^(try-1) (at least 1 s), capped at MaxDelay. A non-empty
// jitterKey adds Airflow's deterministic jitter, moving the exponential delay
// into [base, 2*base) by a hash of the key.
func RetryDelay(p RetryPolicy, tryNumber int, jitterKey string) time.Duration {
	d := p.Delay
	if p.Exponential {
		exp := float64(max(tryNumber-1, 0))
		secs := math.Ceil(p.Delay.Seconds() * math.Pow(2, exp))
		secs = max(secs, 1)
		if jitterKey != "" && secs < maxDelay.Seconds() {
			sum := sha1.Sum([]byte(jitterKey)) //nolint:gosec // jitter, not security
			h := binary.BigEndian.Uint64(sum[:8])
			secs += float64(h % uint64(secs))
		}
		if secs >= maxDelay.Seconds() {
			d = maxDelay
		} else {
			d = time.Duration(secs * float64(time.Second))
		}
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	return max(d, 0)
}
