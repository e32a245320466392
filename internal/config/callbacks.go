package config

import (
	"fmt"
	"time"
)

// Callbacks configures callbacks (docs/emission.md#callbacks): how workers
// run them and how often one whose worker died is run again.
type Callbacks struct {
	MaxActive     int      `toml:"max_active" comment:"callbacks one worker runs at once, beside its task slots"`
	Timeout       Duration `toml:"timeout" comment:"a callback's command running longer is killed and the callback fails"`
	MaxAttempts   int      `toml:"max_attempts" comment:"a callback whose worker stops heartbeating (found by [scheduler] task_instance_heartbeat_timeout) is run again until it has had this many attempts; callbacks run at least once"`
	MaxChainDepth int      `toml:"max_chain_depth" comment:"feedback-loop guard: an asset_event notifier's event may start a run whose callback emits again, and so on, this many times; the next is refused and its callback fails (docs/emission.md#feedback-loops)"`
}

// defaultCallbacks is [callbacks] before any file or environment.
func defaultCallbacks() Callbacks {
	return Callbacks{MaxActive: 4, Timeout: Duration(5 * time.Minute), MaxAttempts: 3, MaxChainDepth: 3}
}

// validateCallbacks checks [callbacks].
func (c *Config) validateCallbacks() []error {
	var errs []error
	if c.Callbacks.MaxActive < 1 {
		errs = append(errs, fmt.Errorf("[callbacks] max_active: must be at least 1, got %d", c.Callbacks.MaxActive))
	}
	if c.Callbacks.Timeout.D() <= 0 {
		errs = append(errs, fmt.Errorf("[callbacks] timeout: must be positive, got %s", c.Callbacks.Timeout.D()))
	}
	if c.Callbacks.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("[callbacks] max_attempts: must be at least 1, got %d", c.Callbacks.MaxAttempts))
	}
	if c.Callbacks.MaxChainDepth < 1 {
		errs = append(errs, fmt.Errorf("[callbacks] max_chain_depth: must be at least 1, got %d", c.Callbacks.MaxChainDepth))
	}
	return errs
}
