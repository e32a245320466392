package core

import "encoding/json"

// TIState is the state of one task instance (one try of one task in one run),
// named as in Airflow. The empty state ("none") means not yet scheduled.
type TIState string

// Task-instance states.
const (
	TINone           TIState = ""
	TIScheduled      TIState = "scheduled"
	TIQueued         TIState = "queued"
	TIRunning        TIState = "running"
	TISuccess        TIState = "success"
	TIFailed         TIState = "failed"
	TIUpForRetry     TIState = "up_for_retry"
	TIUpstreamFailed TIState = "upstream_failed"
	TISkipped        TIState = "skipped"
	TIRemoved        TIState = "removed"
	TIRestarting     TIState = "restarting"
	TIDeferred       TIState = "deferred"
)

// AllTIStates lists every task-instance state, for validation and docs.
var AllTIStates = []TIState{TINone, TIScheduled, TIQueued, TIRunning, TISuccess, TIFailed,
	TIUpForRetry, TIUpstreamFailed, TISkipped, TIRemoved, TIRestarting, TIDeferred}

// Terminal reports whether no further transition happens without a clear.
func (s TIState) Terminal() bool {
	switch s {
	case TISuccess, TIFailed, TIUpstreamFailed, TISkipped, TIRemoved:
		return true
	default:
		return false
	}
}

// Finished reports whether the state counts as done for trigger rules
// (terminal states; up_for_retry is not finished).
func (s TIState) Finished() bool { return s.Terminal() }

// Valid reports whether s is a known state.
func (s TIState) Valid() bool {
	for _, v := range AllTIStates {
		if v == s {
			return true
		}
	}
	return false
}

// MarshalJSON writes the empty state ("none") as null, as Airflow's API
// does for a task instance without one: its clients read a state that is
// "" as no state they know.
func (s TIState) MarshalJSON() ([]byte, error) {
	if s == TINone {
		return []byte("null"), nil
	}
	return json.Marshal(string(s))
}

// UnmarshalJSON reads null as the empty state (MarshalJSON), whatever the
// value read into held before.
func (s *TIState) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*s = TINone
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = TIState(v)
	return nil
}

// String returns "none" for the empty state.
func (s TIState) String() string {
	if s == TINone {
		return "none"
	}
	return string(s)
}

// DagRunState is the state of a DAG run.
type DagRunState string

// DAG-run states.
const (
	RunQueued  DagRunState = "queued"
	RunRunning DagRunState = "running"
	RunSuccess DagRunState = "success"
	RunFailed  DagRunState = "failed"
)

// Terminal reports whether the run is over.
func (s DagRunState) Terminal() bool { return s == RunSuccess || s == RunFailed }

// Valid reports whether s is a known run state.
func (s DagRunState) Valid() bool {
	switch s {
	case RunQueued, RunRunning, RunSuccess, RunFailed:
		return true
	}
	return false
}

// RunType says why a DAG run exists.
type RunType string

// Run types.
const (
	RunManual         RunType = "manual"
	RunScheduled      RunType = "scheduled"
	RunAssetTriggered RunType = "asset_triggered"
	RunBackfill       RunType = "backfill"
)
