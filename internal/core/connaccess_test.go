package core

import (
	"slices"
	"testing"
)

func TestDeclaredConnections(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		task Task
		want []string
	}{
		"none":              {Task{Operator: "bash"}, nil},
		"sql conn_id":       {Task{Operator: "sql", Args: map[string]any{"conn_id": "wh"}}, []string{"wh"}},
		"http conn":         {Task{Operator: "http", Args: map[string]any{"http_conn_id": "api"}}, []string{"api"}},
		"list and arg":      {Task{Operator: "sql", Args: map[string]any{"conn_id": "wh"}, Connections: []string{"s3", "wh"}}, []string{"s3", "wh"}},
		"template declares": {Task{Operator: "sql", Args: map[string]any{"conn_id": "{{ params.db }}"}}, nil},
		"mapped over ids": {Task{Operator: "sql", Expand: map[string]ExpandSource{"conn_id": {Values: []any{"a", "b", 3}}}},
			[]string{"a", "b"}},
		"mapped from xcom": {Task{Operator: "sql", Expand: map[string]ExpandSource{"conn_id": {XCom: &XComRef{TaskID: "up"}}}}, nil},
	} {
		if got := tc.task.DeclaredConnections(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: DeclaredConnections = %v, want %v", name, got, tc.want)
		}
	}
	task := Task{Operator: "sql", Args: map[string]any{"conn_id": "wh"}}
	if !task.DeclaresConnection("wh") || task.DeclaresConnection("other") {
		t.Error("DeclaresConnection disagrees with DeclaredConnections")
	}
}
