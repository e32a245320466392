package core

import (
	"slices"
	"strings"
)

// connArgs are the operator arguments that name a connection.
var connArgs = []string{"conn_id", "http_conn_id"}

// DeclaredConnections returns the connection ids a task declares: its
// Connections list, and its conn_id and http_conn_id arguments when they
// are literal (a template such as "{{ params.db }}" declares nothing: list
// the ids it may render to in Connections), including literal values a
// mapped task expands them over. A task may read only these connections
// through the Execution API unless the deployment allows any
// (docs/adr/0011-task-connection-access.md).
func (t *Task) DeclaredConnections() []string {
	out := slices.Clone(t.Connections)
	add := func(v any) {
		if s, ok := v.(string); ok && s != "" && !strings.Contains(s, "{{") {
			out = append(out, s)
		}
	}
	for _, name := range connArgs {
		add(t.Args[name])
		if src, ok := t.Expand[name]; ok {
			for _, v := range src.Values {
				add(v)
			}
		}
	}
	// A poke sensor's trigger reads its connection on the worker.
	if trig, ok := t.Args["trigger"].(map[string]any); ok {
		if kwargs, ok := trig["kwargs"].(map[string]any); ok {
			for _, name := range connArgs {
				add(kwargs[name])
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// DeclaresConnection reports whether the task declares connection id.
func (t *Task) DeclaresConnection(id string) bool {
	return slices.Contains(t.DeclaredConnections(), id)
}
