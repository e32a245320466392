package config

import (
	"fmt"
	"slices"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
)

// Triggerer configures the triggerer role (docs/triggers.md).
type Triggerer struct {
	Capacity          int      `toml:"capacity" comment:"most triggers one triggerer runs at once (Airflow's [triggerer] capacity)"`
	HeartbeatInterval Duration `toml:"heartbeat_interval" comment:"how often a triggerer records that it is alive; one silent for 1.5 intervals is dead and another triggerer takes its triggers (within two intervals)"`
	TaskTriggerTypes  []string `toml:"task_trigger_types" comment:"trigger types a running task may defer on (tc.Defer, weir defer); a DAG's sensors may use any type. command is left out by default: it would run a process of the task's choosing on the triggerer's host (docs/security.md#triggers)"`
	StreamMaxPending  int      `toml:"stream_max_pending" comment:"most events of one stream persisted but not yet consumed, when the stream sets no max_pending: its producer waits for consumers beyond it (docs/streaming.md#backpressure)"`
	StreamRetention   Duration `toml:"stream_retention" comment:"how long consumed stream events are kept before the triggerer deletes them (docs/streaming.md#retention)"`
}

// maxStreamMaxPending bounds [triggerer] stream_max_pending (as
// service.MaxStreamMaxPending bounds a stream's own).
const maxStreamMaxPending = 1_000_000

// defaultTriggerer is [triggerer] before any file or environment.
func defaultTriggerer() Triggerer {
	return Triggerer{Capacity: 1000, HeartbeatInterval: Duration(5 * time.Second),
		TaskTriggerTypes: slices.Clone(runs.DefaultTaskTriggerTypes),
		StreamMaxPending: core.DefaultStreamMaxPending, StreamRetention: Duration(24 * time.Hour)}
}

// validateTriggerer checks [triggerer].
func (c *Config) validateTriggerer() []error {
	var errs []error
	if c.Triggerer.Capacity < 1 {
		errs = append(errs, fmt.Errorf("[triggerer] capacity: must be at least 1, got %d", c.Triggerer.Capacity))
	}
	for _, t := range c.Triggerer.TaskTriggerTypes {
		if t == "" {
			errs = append(errs, fmt.Errorf("[triggerer] task_trigger_types: an empty type name"))
		}
	}
	if c.Triggerer.StreamMaxPending < 1 || c.Triggerer.StreamMaxPending > maxStreamMaxPending {
		errs = append(errs, fmt.Errorf("[triggerer] stream_max_pending: must be between 1 and %d, got %d", maxStreamMaxPending, c.Triggerer.StreamMaxPending))
	}
	if c.Triggerer.StreamRetention <= 0 {
		errs = append(errs, fmt.Errorf("[triggerer] stream_retention: must be a positive duration such as \"24h\", got %s", c.Triggerer.StreamRetention))
	}
	if c.Triggerer.HeartbeatInterval <= 0 {
		errs = append(errs, fmt.Errorf("[triggerer] heartbeat_interval: must be a positive duration such as \"5s\", got %s", c.Triggerer.HeartbeatInterval))
	}
	return errs
}
