package trigger

import (
	"context"
	"errors"
	"time"
)

// DefaultPollInterval is how often a polling trigger checks when its
// poke_interval kwarg is not set (Airflow's sensors poke every 60 s; Weir's
// triggers are cheap goroutines).
const DefaultPollInterval = 5 * time.Second

// MaxListed bounds how many items (files, objects) a polling trigger's
// event lists, so that an event stays small whatever matched.
const MaxListed = 1000

// Check is one poll of a polling trigger: done reports that what it waits
// for holds, with payload as the event. An error is logged and the poll
// repeats; wrap it with Permanent to end the trigger (and fail its waiters).
type Check func(ctx context.Context) (payload any, done bool, err error)

// permanentError marks a poll error that no later poll can fix.
type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }
func (p permanentError) Unwrap() error { return p.err }

// Permanent marks err as one that ends a polling trigger (a bad kwarg
// found only at run time, a connection that does not exist).
func Permanent(err error) error { return permanentError{err} }

// Poll runs check now and then every interval until it is done, then emits
// its payload once and returns. A transient error is written to the trigger
// log and polled again; a Permanent one is returned.
func Poll(ctx context.Context, rt *Runtime, interval time.Duration, check Check) error {
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	var lastErr string
	for {
		payload, done, err := check(ctx)
		switch {
		case err != nil && errors.As(err, new(permanentError)):
			return err
		case err != nil && ctx.Err() == nil:
			if msg := err.Error(); msg != lastErr { // one line per distinct error, not per poll
				rt.Logf("poll failed (will retry every %s): %v", interval, err)
				lastErr = msg
			}
		case done:
			return rt.Emit(ctx, payload)
		}
		if err := Sleep(ctx, interval); err != nil {
			return err
		}
	}
}

// Sleep waits d or until ctx ends (then it returns ctx's error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
