package core

import "time"

// Clock tells the time. Services take one so that schedule, retry, lease and
// retention logic can be tested with a fake clock.
type Clock interface {
	Now() time.Time
}

// SystemClock is the real wall clock, in UTC.
type SystemClock struct{}

// Now returns the current UTC time.
func (SystemClock) Now() time.Time { return time.Now().UTC() }
