package core

import "testing"

// TestEventSourceString is each source kind as `weir assets events` shows
// it in its SOURCE column: the task try; a callback with the try that fired
// it, or a DAG-level callback's run and no task; the API user; the watcher.
func TestEventSourceString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ev   AssetEvent
		want string
	}{
		{"a task's try", AssetEvent{SourceKind: AssetSourceTask, SourceDagID: "shop", SourceRunID: "r7", SourceTaskID: "load",
			SourceMapIndex: NoMapIndex, SourceTryNumber: 3}, "task shop/r7/load try 3"},
		{"a mapped try", AssetEvent{SourceKind: AssetSourceTask, SourceDagID: "shop", SourceRunID: "r7", SourceTaskID: "load",
			SourceMapIndex: 2, SourceTryNumber: 1}, "task shop/r7/load[2] try 1"},
		{"a task's callback", AssetEvent{SourceKind: AssetSourceCallback, SourceDagID: "shop", SourceRunID: "r7", SourceTaskID: "load",
			SourceMapIndex: NoMapIndex, SourceTryNumber: 2, SourceCallbackID: 41}, "callback 41 of task shop/r7/load try 2"},
		{"a mapped task's callback", AssetEvent{SourceKind: AssetSourceCallback, SourceDagID: "shop", SourceRunID: "r7", SourceTaskID: "load",
			SourceMapIndex: 0, SourceTryNumber: 1, SourceCallbackID: 43}, "callback 43 of task shop/r7/load[0] try 1"},
		{"a DAG-level callback", AssetEvent{SourceKind: AssetSourceCallback, SourceDagID: "ops_failing_load", SourceRunID: "fails",
			SourceMapIndex: NoMapIndex, SourceCallbackID: 42}, "callback 42 of run ops_failing_load/fails"},
		{"an API user", AssetEvent{SourceKind: AssetSourceAPI, SourceUser: "ana", SourceMapIndex: NoMapIndex}, "api ana"},
		{"the CLI's user", AssetEvent{SourceKind: AssetSourceAPI, SourceUser: "cli:root", SourceMapIndex: NoMapIndex}, "api cli:root"},
		{"a watcher", AssetEvent{SourceKind: AssetSourceWatcher, SourceWatcher: "landing", SourceMapIndex: NoMapIndex}, "watcher landing"},
		// Fields that do not belong to the kind are not shown.
		{"a watcher with a stray run", AssetEvent{SourceKind: AssetSourceWatcher, SourceWatcher: "landing", SourceDagID: "x", SourceRunID: "y"},
			"watcher landing"},
		{"a kind this version does not know", AssetEvent{SourceKind: "webhook", SourceUser: "u", SourceDagID: "x"}, "webhook"},
	}
	for _, tc := range tests {
		if got := tc.ev.Source().String(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
