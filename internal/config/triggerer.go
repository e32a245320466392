package config

import (
	"fmt"
	"time"
)

// Triggerer configures the triggerer role (docs/triggers.md).
type Triggerer struct {
	Capacity          int      `toml:"capacity" comment:"most triggers one triggerer runs at once (Airflow's [triggerer] capacity)"`
	HeartbeatInterval Duration `toml:"heartbeat_interval" comment:"how often a triggerer records that it is alive; one silent for 1.5 intervals is dead and another triggerer takes its triggers (within two intervals)"`
}

// defaultTriggerer is [triggerer] before any file or environment.
func defaultTriggerer() Triggerer {
	return Triggerer{Capacity: 1000, HeartbeatInterval: Duration(5 * time.Second)}
}

// validateTriggerer checks [triggerer].
func (c *Config) validateTriggerer() []error {
	var errs []error
	if c.Triggerer.Capacity < 1 {
		errs = append(errs, fmt.Errorf("[triggerer] capacity: must be at least 1, got %d", c.Triggerer.Capacity))
	}
	if c.Triggerer.HeartbeatInterval <= 0 {
		errs = append(errs, fmt.Errorf("[triggerer] heartbeat_interval: must be a positive duration such as \"5s\", got %s", c.Triggerer.HeartbeatInterval))
	}
	return errs
}
