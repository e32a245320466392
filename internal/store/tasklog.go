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
	// Deferred, for a chunk at Offset 0 (a try's whole log, in its end's
	// transaction), appends its part past the log's end with one statement
	// that a transaction may send with its next (sqlstore.Deferred: on
	// PostgreSQL no round trip of its own), and returns the chunk's end
	// rather than the log's length, which only a read would give. Should
	// the statement store nothing (the log as long already, or a
	// concurrent append of the same bytes committed first), the
	// transaction appends what is missing, as any append does, before it
	// commits. Its error fails the transaction.
	Deferred bool
}

// Kinds of task log record (TaskLog.Kind): where a try's log was stored.
const (
	TaskLogFolder   = "folder"   // a file in an api-server's log folder
	TaskLogDatabase = "database" // chunks in the metadata database
	TaskLogRemote   = "remote"   // chunks while the try runs, then one object
)

// TaskLog records where a try's log was stored (docs/deployment.md#task-logs).
type TaskLog struct {
	Key       string // the log's name (tasklog.Name)
	DagID     string
	RunID     string
	TaskID    string
	MapIndex  int
	TryNumber int
	Kind      string // TaskLogFolder, TaskLogDatabase or TaskLogRemote
	// Location is where the log is: "host:folder" for a folder, the
	// object's URL (without credentials) for a remote log.
	Location  string
	Size      int64 // a stored remote log's length
	Attempts  int   // failed uploads of a remote log
	Error     string
	CreatedAt time.Time
	StoredAt  *time.Time // when a remote log was uploaded whole; nil = not yet
	PrunedAt  *time.Time // when retention deleted an uploaded log; nil = kept
}
