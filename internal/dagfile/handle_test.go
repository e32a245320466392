package dagfile_test

import (
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
	"github.com/weirflow/weir/internal/trigger/builtin"
)

func loadHandler(task string) ([]core.DAG, error) {
	reg := builtin.Registry()
	return dagfile.LoadWith("h.yaml", []byte("dag_id: h\ntasks:\n"+task),
		dagfile.Options{CheckTrigger: reg.Check, StreamTypes: reg.StreamTypes()})
}

// TestStreamHandlerLoads: a deferrable sensor on a streaming trigger with
// handle_command keeps the handler in its args and is a streaming
// operator.
func TestStreamHandlerLoads(t *testing.T) {
	dags, err := loadHandler(`  - task_id: load
    operator: sensor
    trigger: {type: command, command: "seq 3"}
    handle_command: cat
`)
	if err != nil {
		t.Fatal(err)
	}
	load := dags[0].Task("load")
	if !load.HandlesStream() || load.Args[core.ArgHandleCommand] != "cat" || load.StartTrigger == nil {
		t.Fatalf("load = %+v, want a deferrable streaming operator with handle_command cat", load)
	}
}

// TestStreamHandlerRefusals: each bad use of a handler is refused naming
// the field, and the file loads nothing.
func TestStreamHandlerRefusals(t *testing.T) {
	cases := map[string]struct{ task, want string }{
		"poke mode": {`  - task_id: w
    operator: sensor
    mode: poke
    trigger: {type: command, command: "seq 3"}
    handle_command: cat
`, "tasks[0].mode: a sensor with a stream handler waits deferrable"},
		"both handlers": {`  - task_id: w
    operator: sensor
    trigger: {type: command, command: "seq 3"}
    handle_command: cat
    handle_function: h.w
`, "tasks[0].handle_function: set either handle_command or handle_function, not both"},
		"empty command": {`  - task_id: w
    operator: sensor
    trigger: {type: command, command: "seq 3"}
    handle_command: ""
`, "tasks[0].handle_command: must be a non-empty string"},
		"trigger does not stream": {`  - task_id: w
    operator: sensor
    trigger: {type: timedelta, delta: 1s}
    handle_command: cat
`, `tasks[0].trigger.type: a sensor with a stream handler waits on a trigger that streams (types that stream: command, http_paginated, sql_cursor), not "timedelta"`},
		"iterated over": {`  - task_id: w
    operator: sensor
    trigger: {type: command, command: "seq 3"}
    handle_command: cat
  - task_id: each
    operator: bash
    iterate: w
    bash_command: echo
`, `tasks[1].iterate: task "w" handles its stream itself`},
		"on a bash task": {`  - task_id: w
    operator: bash
    bash_command: echo
    handle_command: cat
`, "handle_command"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dags, err := loadHandler(c.task)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("load = %v, %v; want an error containing %q", dags, err, c.want)
			}
		})
	}
}
