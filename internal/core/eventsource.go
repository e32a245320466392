package core

import (
	"fmt"
	"strings"
)

// EventSource is where an asset event came from, as the CLI and the web UI
// describe it (docs/assets.md#asset-events): AssetEvent.Source decides
// which of an event's source fields belong to its kind, and each surface
// renders the result (String for the CLI, a template for the UI).
type EventSource struct {
	// Kind is the event's source kind (AssetSourceTask, ...).
	Kind string
	// Who is the API user of an api event or the watcher of a watcher
	// event; "" otherwise.
	Who string
	// CallbackID is the callback that emitted a callback event; 0
	// otherwise.
	CallbackID int64
	// DagID and RunID are the run of the task try or callback that made
	// the event; "" for an event of the API or a watcher.
	DagID, RunID string
	// TaskID, MapIndex and TryNumber are the task try that made the event,
	// or whose callback emitted it; TaskID is "" for a DAG-level callback
	// (its event has no task) and for the other kinds.
	TaskID    string
	MapIndex  int
	TryNumber int
}

// Source returns e's source as the CLI and the UI describe it: a task's
// try; a callback with its run and, for a task-level callback, the try
// that fired it; the API user; the watcher. A kind this version does not
// know keeps only its name.
func (e *AssetEvent) Source() EventSource {
	s := EventSource{Kind: e.SourceKind, MapIndex: NoMapIndex}
	switch e.SourceKind {
	case AssetSourceAPI:
		s.Who = e.SourceUser
	case AssetSourceWatcher:
		s.Who = e.SourceWatcher
	case AssetSourceCallback:
		s.CallbackID = e.SourceCallbackID
		s.DagID, s.RunID = e.SourceDagID, e.SourceRunID
		if e.SourceTaskID != "" {
			s.TaskID, s.MapIndex, s.TryNumber = e.SourceTaskID, e.SourceMapIndex, e.SourceTryNumber
		}
	case AssetSourceTask:
		s.DagID, s.RunID = e.SourceDagID, e.SourceRunID
		s.TaskID, s.MapIndex, s.TryNumber = e.SourceTaskID, e.SourceMapIndex, e.SourceTryNumber
	}
	return s
}

// String is the source in one line, as `weir assets events` prints it:
// "task DAG/RUN/TASK[MAP_INDEX] try N", "callback ID of task
// DAG/RUN/TASK try N" (a task-level callback), "callback ID of run
// DAG/RUN" (a DAG-level one), "api USER", "watcher NAME".
func (s EventSource) String() string {
	var b strings.Builder
	if s.Kind == AssetSourceCallback {
		fmt.Fprintf(&b, "callback %d of ", s.CallbackID)
	}
	switch {
	case s.TaskID != "":
		fmt.Fprintf(&b, "task %s/%s/%s", s.DagID, s.RunID, s.TaskID)
		if s.MapIndex >= 0 {
			fmt.Fprintf(&b, "[%d]", s.MapIndex)
		}
		if s.TryNumber > 0 {
			fmt.Fprintf(&b, " try %d", s.TryNumber)
		}
	case s.RunID != "":
		fmt.Fprintf(&b, "run %s/%s", s.DagID, s.RunID)
	default:
		b.WriteString(strings.TrimSpace(s.Kind + " " + s.Who))
	}
	return b.String()
}
