package runs

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/weirflow/weir/internal/core"
)

// DefaultTaskTriggerTypes are the built-in trigger types a running task may
// defer on: all but command, which would run a process of the task's
// choosing on the triggerer's host (DAG-declared sensors may use it).
var DefaultTaskTriggerTypes = []string{"datetime", "timedelta", "file", "http", "sql", "s3_key", "external_task"}

// DeferralRules bound what a running task may ask the triggerer to do.
type DeferralRules struct {
	// TaskTriggerTypes are the types it may defer on ([triggerer]
	// task_trigger_types); nil = DefaultTaskTriggerTypes.
	TaskTriggerTypes []string
	// AllowAnyConnection lifts the rule that a trigger reads only
	// connections the task declares ([core] allow_any_connection).
	AllowAnyConnection bool
}

// connKwargs are the trigger kwargs that name a connection.
var connKwargs = []string{"conn_id", "http_conn_id"}

// CheckTaskDeferral applies the rules to a deferral that task's running
// code asks for (the trigger's kwargs are the task's choice, and the
// triggerer reaches the database and the connections): its type must be
// one tasks may use, and the connections its kwargs name must be ones the
// task declares, as for the task's own reads (docs/adr/0011-task-connection-access.md).
// Errors wrap core.ErrForbidden and name the problem.
func CheckTaskDeferral(task *core.Task, d core.Deferral, r DeferralRules) error {
	types := r.TaskTriggerTypes
	if types == nil {
		types = DefaultTaskTriggerTypes
	}
	if !slices.Contains(types, d.Trigger.Type) {
		return fmt.Errorf("a running task may not defer on a %s trigger ([triggerer] task_trigger_types allows %s; a DAG can declare it as a sensor): %w",
			d.Trigger.Type, strings.Join(types, ", "), core.ErrForbidden)
	}
	if r.AllowAnyConnection {
		return nil
	}
	var kwargs map[string]any
	_ = json.Unmarshal(d.Trigger.Kwargs, &kwargs) // the type's own check refuses malformed kwargs
	for key, v := range kwargs {
		// Every spelling: the types' decoding refuses a name in another
		// case (trigger.DecodeKwargs), and a connection is checked anyway.
		name := strings.ToLower(key)
		if !slices.Contains(connKwargs, name) {
			continue
		}
		id, _ := v.(string)
		if id != "" && (task == nil || !task.DeclaresConnection(id)) {
			return fmt.Errorf("the trigger's %s %q is not a connection the task declares (conn_id, http_conn_id or its connections list): %w",
				key, id, core.ErrForbidden)
		}
	}
	return nil
}
