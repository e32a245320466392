package scheduler

import (
	"context"
	"time"
)

// WakeLight runs one light wake-up of s (what a try's end wakes), as
// RunOnce runs a whole one.
func WakeLight(ctx context.Context, s *Scheduler) error {
	s.init()
	_, err := s.wake(ctx, false)
	return err
}

// LightDelay is how long a light pass a try's end asks for waits now.
func LightDelay(s *Scheduler) time.Duration { return s.lightDelay() }

// Busy reports whether the last queueing found the workers claiming from
// a backlog a light pass may wait behind.
func Busy(s *Scheduler) bool {
	s.passMu.Lock()
	defer s.passMu.Unlock()
	return s.busy
}

// Spacing of light passes during a backlog (ADR 0034).
const (
	BusyBacklog  = busyBacklog
	LightPassGap = lightPassGap
)
