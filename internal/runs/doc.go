// Package runs holds the pure rules of a DAG run's lifecycle, with no I/O:
// validating a trigger and its defaults (PrepareTrigger, RunID), a run's
// initial task instances and priority weights (NewTaskInstances), the retry
// decision and back-off (Outcome, NextRetryAt), and what a clear selects
// (Clearable, ClearExtraTries). Package service carries them out in store
// transactions; the scheduler uses them directly.
package runs
