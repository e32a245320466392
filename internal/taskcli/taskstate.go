package taskcli

import (
	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/stateref"
)

// TaskStateCmd is `weir task-state`: the try's own task instance's state.
// backends are the program's custom state backends (weir.WithStateBackend).
func TaskStateCmd(backends stateref.Registry) *cobra.Command {
	return stateCmd(stateCLI{
		backends: backends,
		use:      "task-state",
		short:    "Read and write this task instance's task state from inside a running task",
		long: `Task state is a key/value store of JSON values scoped to one task instance (dag, run,
task, map index) and shared by all its tries: a retry reads what an earlier try wrote.
Reads WEIR_API_URL, WEIR_TASK_TOKEN (or WEIR_TASK_TOKEN_FILE) and WEIR_TI_ID, which the
worker sets for every task. When the worker has a state backend ([workers] state_backend,
or a custom [state_store] backend) it also sets WEIR_STATE_BACKEND: values then go to that
backend and only a reference to the API.

Exit codes: 0 success; 1 get found no key and no --default was given; 2 bad input (not
JSON, null, NaN or Infinity, a bad retention or key, a value over [state_store]
max_value_bytes); 3 the API refused the request (e.g. the try is no longer running) or
could not be reached. Messages go to stderr.`,
		getExample: "  last=$(weir task-state get last_page --default 0)",
		setShort:   "Store a JSON value under KEY (any JSON but null)",
		setExample: `  weir task-state set last_page 7
  weir task-state set job '{"id": "j-42"}' --retention never
  weir task-state set note '"text needs JSON quotes"' --retention 6h`,
		clearShort:    "Delete every key of this task instance (of every map index with --all-map-indices)",
		retention:     true,
		allMapIndices: true,
		flags:         func(*cobra.Command) {},
		scope: func(*cobra.Command, operator.State) (core.StateScope, error) {
			return core.StateScope{Kind: core.StateTask}, nil // the token names the instance
		},
		absent: func(core.StateScope) string { return "this task instance" },
	})
}
