package core

import "time"

// DagWarning is something wrong with a DAG that still loads (Airflow's
// DagWarning), such as a shell command that prints trigger data unquoted.
// A DAG has at most one warning of each type; its message lists every
// occurrence.
type DagWarning struct {
	DagID       string    `json:"dag_id"`
	WarningType string    `json:"warning_type"`
	Message     string    `json:"message"`
	Timestamp   time.Time `json:"timestamp"`
}
