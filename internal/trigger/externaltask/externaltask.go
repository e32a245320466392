// Package externaltask holds the external_task trigger: it fires once
// another DAG run, or one of its task instances, reaches one of the
// awaited states, and fails once it reaches a failed state (Airflow's
// ExternalTaskSensor, for one given run).
package externaltask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/trigger"
)

// Type is the external_task trigger. kwargs: {"dag_id": "upstream",
// "run_id": "scheduled__2026-12-01T00:00:00Z", "task_id": "load",
// "states": ["success"]}.
var Type = trigger.Type{
	Name:    "external_task",
	Summary: "fires once another DAG's run, or one of its tasks, reaches a state; fails on a failed state",
	New:     newTrigger,
}

// target is what the trigger watches: a run or one task instance of it.
type target struct {
	DagID    string `json:"dag_id"`
	RunID    string `json:"run_id"`
	TaskID   string `json:"task_id,omitempty"`
	MapIndex *int   `json:"map_index,omitempty"`
}

// scope is what differs between watching a run and watching a task.
type scope struct {
	states        []string // every valid state, for messages
	defaultFailed []string
	valid         func(string) bool
}

var (
	runScope = scope{
		states:        []string{string(core.RunQueued), string(core.RunRunning), string(core.RunSuccess), string(core.RunFailed)},
		defaultFailed: []string{string(core.RunFailed)},
		valid:         func(s string) bool { return core.DagRunState(s).Valid() },
	}
	taskScope = scope{
		states:        taskStates(),
		defaultFailed: []string{string(core.TIFailed), string(core.TIUpstreamFailed)},
		valid:         func(s string) bool { return s != "" && core.TIState(s).Valid() },
	}
)

func taskStates() []string {
	var out []string
	for _, s := range core.AllTIStates {
		if s != core.TINone {
			out = append(out, string(s))
		}
	}
	return out
}

// externalTask is a built external_task trigger.
type externalTask struct {
	target
	states, failed []string
	interval       time.Duration
}

func newTrigger(raw json.RawMessage) (trigger.Trigger, error) {
	var k struct {
		DagID        *string  `json:"dag_id"`
		RunID        *string  `json:"run_id"`
		TaskID       *string  `json:"task_id"`
		MapIndex     *int     `json:"map_index"`
		States       []string `json:"states"`
		FailedStates []string `json:"failed_states"`
		PokeInterval *string  `json:"poke_interval"`
	}
	if err := trigger.DecodeKwargs(raw, &k); err != nil {
		return nil, err
	}
	switch {
	case k.DagID == nil || *k.DagID == "":
		return nil, trigger.Invalid("dag_id", "is required (the DAG whose run to watch)")
	case k.RunID == nil || *k.RunID == "":
		return nil, trigger.Invalid("run_id", "is required (the run to watch, such as \"{{ run_id }}\" for the same run id)")
	case k.TaskID != nil && *k.TaskID == "":
		return nil, trigger.Invalid("task_id", "must not be empty (leave it out to watch the run's state)")
	case k.MapIndex != nil && k.TaskID == nil:
		return nil, trigger.Invalid("map_index", "needs task_id (a run has no map index)")
	case k.MapIndex != nil && *k.MapIndex < -1:
		return nil, trigger.Invalid("map_index", "must be -1 (not mapped) or an index from 0, got %d", *k.MapIndex)
	}
	e := &externalTask{target: target{DagID: *k.DagID, RunID: *k.RunID}}
	sc := runScope
	if k.TaskID != nil {
		sc = taskScope
		e.TaskID, e.MapIndex = *k.TaskID, k.MapIndex
		if e.MapIndex == nil {
			e.MapIndex = new(-1)
		}
	}
	var err error
	if e.states, err = states("states", k.States, []string{"success"}, sc); err != nil {
		return nil, err
	}
	if e.failed, err = states("failed_states", k.FailedStates, sc.defaultFailed, sc); err != nil {
		return nil, err
	}
	for _, s := range e.states {
		if slices.Contains(e.failed, s) {
			return nil, trigger.Invalid("failed_states", "must not hold %q, which states awaits", s)
		}
	}
	if e.interval, err = trigger.Interval("poke_interval", k.PokeInterval, trigger.DefaultPollInterval); err != nil {
		return nil, err
	}
	return e, nil
}

// states checks the state list kwarg name (nil gives def) against sc.
func states(name string, v, def []string, sc scope) ([]string, error) {
	if v == nil {
		return def, nil
	}
	if len(v) == 0 && name == "states" {
		return nil, trigger.Invalid(name, "must list at least one state")
	}
	for _, s := range v {
		if !sc.valid(s) {
			return nil, trigger.Invalid(name, "holds %q, which is not one of %s", s, strings.Join(sc.states, ", "))
		}
	}
	return v, nil
}

// Payload is the external_task trigger's event: what was watched and the
// state it reached.
type Payload struct {
	target
	State string `json:"state"`
}

func (e *externalTask) Run(ctx context.Context, rt *trigger.Runtime) error {
	if rt.Runs == nil {
		return errors.New("external_task: this triggerer cannot read DAG runs")
	}
	return trigger.Poll(ctx, rt, e.interval, func(ctx context.Context) (any, bool, error) {
		state, err := e.state(ctx, rt.Runs)
		switch {
		case errors.Is(err, core.ErrNotFound):
			return nil, false, fmt.Errorf("%s does not exist (yet)", e.describe())
		case err != nil:
			return nil, false, fmt.Errorf("read %s: %w", e.describe(), err)
		case slices.Contains(e.failed, state):
			return nil, false, trigger.Permanent(fmt.Errorf("%s reached state %q (one of failed_states %v)", e.describe(), state, e.failed))
		}
		return Payload{target: e.target, State: state}, slices.Contains(e.states, state), nil
	})
}

// state reads the watched run's or task instance's state.
func (e *externalTask) state(ctx context.Context, runs trigger.RunReader) (string, error) {
	if e.TaskID == "" {
		run, err := runs.DagRunGet(ctx, e.DagID, e.RunID)
		if err != nil {
			return "", err
		}
		return string(run.State), nil
	}
	ti, err := runs.TaskInstanceGetByKey(ctx, e.DagID, e.RunID, e.TaskID, *e.MapIndex)
	if err != nil {
		return "", err
	}
	return ti.State.String(), nil
}

func (e *externalTask) describe() string {
	run := fmt.Sprintf("run %q of DAG %q", e.RunID, e.DagID)
	if e.TaskID == "" {
		return run
	}
	return fmt.Sprintf("task %q (map index %d) of %s", e.TaskID, *e.MapIndex, run)
}
