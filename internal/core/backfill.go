package core

import (
	"encoding/json"
	"fmt"
	"time"
)

// ReprocessBehavior says what a backfill does at a logical date that
// already has a run (Airflow 3's reprocess_behavior).
type ReprocessBehavior string

// The reprocess behaviors. A run still queued or running is never
// reprocessed, whatever the behavior.
const (
	// ReprocessNone leaves every existing run alone.
	ReprocessNone ReprocessBehavior = "none"
	// ReprocessFailed clears and reruns the failed runs.
	ReprocessFailed ReprocessBehavior = "failed"
	// ReprocessCompleted clears and reruns the failed and successful runs.
	ReprocessCompleted ReprocessBehavior = "completed"
)

// ParseReprocessBehavior checks a reprocess behavior ("" = none).
func ParseReprocessBehavior(s string) (ReprocessBehavior, error) {
	switch b := ReprocessBehavior(s); b {
	case "":
		return ReprocessNone, nil
	case ReprocessNone, ReprocessFailed, ReprocessCompleted:
		return b, nil
	}
	return "", fmt.Errorf("reprocess_behavior %q: allowed are none, failed, completed: %w", s, ErrInvalid)
}

// Backfill is a request to run a DAG over a range of past logical dates
// (docs/backfills.md). Its runs (run_type backfill) start within its own
// MaxActiveRuns while it is not paused; CompletedAt is set once none of
// them is queued or running, or when it is cancelled.
type Backfill struct {
	ID                int64             `json:"id"`
	DagID             string            `json:"dag_id"`
	FromDate          time.Time         `json:"from_date"`
	ToDate            time.Time         `json:"to_date"`
	DagRunConf        json.RawMessage   `json:"dag_run_conf"`
	IsPaused          bool              `json:"is_paused"`
	ReprocessBehavior ReprocessBehavior `json:"reprocess_behavior"`
	MaxActiveRuns     int               `json:"max_active_runs"`
	CreatedAt         time.Time         `json:"created_at"`
	CompletedAt       *time.Time        `json:"completed_at"`
	UpdatedAt         time.Time         `json:"updated_at"`
}

// BackfillDagRun is one logical date of a backfill: the run it created or
// cleared, or why it made none (ExceptionReason).
type BackfillDagRun struct {
	BackfillID      int64     `json:"backfill_id"`
	DagRunID        *int64    `json:"dag_run_id"`
	ExceptionReason string    `json:"exception_reason,omitempty"`
	LogicalDate     time.Time `json:"logical_date"`
	SortOrdinal     int       `json:"sort_ordinal"`
}

// Why a backfill made no run at a logical date (Airflow's
// BackfillDagRunExceptionReason).
const (
	BackfillInFlight      = "in flight"      // the date's run is queued or running
	BackfillAlreadyExists = "already exists" // the date's run is kept (reprocess_behavior)
)
