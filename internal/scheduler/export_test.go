package scheduler

import "context"

// WakeLight runs one light wake-up of s (what a try's end wakes), as
// RunOnce runs a whole one.
func WakeLight(ctx context.Context, s *Scheduler) error {
	s.init()
	_, err := s.wake(ctx, false)
	return err
}
