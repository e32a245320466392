package store

import "time"

// TaskLogAppendParams appends a chunk of a task log kept in the database.
type TaskLogAppendParams struct {
	// Key names the log: its path in the task log folder's layout
	// (tasklog.Name).
	Key string
	// Offset is the chunk's first byte in the log.
	Offset int64
	Data   []byte
	Now    time.Time
}
