package core

// Writer kinds of asset state: who last wrote an entry (docs/asset-state.md,
// "Who wrote it").
const (
	StateWriterTask    = "task"    // a running task try, through the Execution API
	StateWriterWatcher = "watcher" // an asset watcher
	StateWriterAPI     = "api"     // a program through the REST API, without a user
	StateWriterUser    = "user"    // a user, through the REST API or the admin CLI
)

// StateWriter records who last wrote an asset-state entry. A task writer
// names its try (DagID, RunID, TaskID, MapIndex, TryNumber); a user writer
// names the user. The fields are copies, not references, so they outlive
// the run that wrote them. The JSON names are those of the Execution API
// and REST answers (last_updated_by_*).
type StateWriter struct {
	Kind      string `json:"last_updated_by_kind"`
	DagID     string `json:"last_updated_by_dag_id"`
	RunID     string `json:"last_updated_by_run_id"`
	TaskID    string `json:"last_updated_by_task_id"`
	MapIndex  int    `json:"last_updated_by_map_index"`
	TryNumber int    `json:"last_updated_by_try"`
	User      string `json:"last_updated_by_user"`
}
