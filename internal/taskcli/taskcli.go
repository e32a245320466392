// Package taskcli holds the in-task commands of the weir CLI: the commands a
// task's own process runs (any language, through the `weir` the worker puts
// first on its PATH) to reach its try's Execution API with the token the
// worker gave it: `weir task-state`, `weir asset-state`, `weir xcom push|pull`
// and `weir assets add-to-alias`. Package cli mounts them. Like the worker,
// this package imports no store and no server package (enforced by
// internal/worker's import-graph test), so the task side of Weir never
// reaches the database.
package taskcli

// ExitError is a command's failure with the exit code it documents (here:
// 1 for an absent key, 2 for bad input, 3 for a refused or failed request).
// The CLI's Run returns Code as the process exit code; package cli's own
// commands use it too.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }
