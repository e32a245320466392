package logstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
	"github.com/weirflow/weir/internal/tasklog/dblog"
)

// Recorded is a log store that records in the database where each try's
// log went when its first bytes are stored, and explains a read of a log
// it does not hold from that record: a try without a record wrote nothing
// (an empty log); one with a record is a *tasklog.MissingError naming
// where the log went. Callbacks' logs are not recorded.
type Recorded struct {
	Logs     tasklog.Logs
	Store    Store
	Kind     string     // store.TaskLogFolder, TaskLogDatabase or TaskLogRemote
	Location string     // where Logs keeps logs (FolderLocation, a remote URL)
	Clock    core.Clock // nil = the system clock
	// Folder is [logging] base_log_folder when Logs keeps logs elsewhere:
	// a try's log recorded as stored there (while log_store was folder)
	// is read from it.
	Folder string
}

// AppendAt implements tasklog.Logs: the first bytes of a try's log are
// recorded once stored (again when sent again: the last api-server to
// store them wins).
func (r Recorded) AppendAt(ctx context.Context, key tasklog.Key, offset int64, data []byte) (int64, error) {
	next, err := r.Logs.AppendAt(ctx, key, offset, data)
	if err != nil || offset != 0 || len(data) == 0 || key.Callback != 0 {
		return next, err
	}
	name, err := tasklog.Name(key)
	if err != nil {
		return next, err
	}
	clk := r.Clock
	if clk == nil {
		clk = core.SystemClock{}
	}
	rec := &store.TaskLog{Key: name, DagID: key.DagID, RunID: key.RunID, TaskID: key.TaskID, MapIndex: key.MapIndex,
		TryNumber: key.TryNumber, Kind: r.Kind, Location: r.Location, CreatedAt: clk.Now()}
	if err := r.Store.TaskLogRecord(ctx, rec); err != nil {
		return next, fmt.Errorf("record where the task log went: %w", err)
	}
	return next, nil
}

// Transactional reports whether the store's appends can join a
// transaction (InTx): its live logs are rows of the database (log_store =
// database, or a remote store while the try runs), not files.
func (r Recorded) Transactional() bool {
	switch r.Logs.(type) {
	case dblog.Database, *Remote:
		return true
	}
	return false
}

// InTx returns the log store with its appends in tx, so that a try's end
// stores the end of its log and its state in one transaction (a whole log,
// at offset 0, with the transaction's next statement: dblog.Database.InTx);
// a store that is not Transactional is returned as it is.
func (r Recorded) InTx(tx store.Store) tasklog.Logs {
	switch l := r.Logs.(type) {
	case dblog.Database:
		l.Store, l.InTx = tx, true
		r.Logs = l
	case *Remote:
		c := *l
		c.Live.Store, c.Live.InTx, c.Store = tx, true, tx
		r.Logs = &c
	default:
		return r
	}
	r.Store = tx
	return r
}

// Read implements tasklog.Logs. A log Logs does not hold is read from
// Folder when set and the file is there: logs stored there while
// log_store was folder (a worker that wrote the folder itself kept no
// record of them), and those `weir dags test` wrote there whatever the
// store (before ADR 0046).
func (r Recorded) Read(ctx context.Context, key tasklog.Key, offset int64) ([]byte, int64, error) {
	data, next, err := r.Logs.Read(ctx, key, offset)
	if !tasklog.WroteNothing(err) {
		return data, next, err
	}
	if r.Folder != "" {
		if data, next, ferr := tasklog.Folder(r.Folder).Read(ctx, key, offset); !tasklog.WroteNothing(ferr) {
			return data, next, ferr
		}
	}
	if key.Callback != 0 {
		return nil, offset, err
	}
	rec, rerr := r.record(ctx, key)
	switch {
	case rerr != nil:
		return nil, offset, rerr
	case rec == nil:
		return nil, offset, err // the try wrote nothing
	}
	// The record is written after the log's first bytes (AppendAt): a
	// first read that raced those bytes' append finds them now.
	if data, next, err := r.Logs.Read(ctx, key, offset); !tasklog.WroteNothing(err) {
		return data, next, err
	}
	return nil, offset, &tasklog.MissingError{Key: key, Reason: r.reason(rec)}
}

// Size implements tasklog.Logs, with Read's fallback to Folder.
func (r Recorded) Size(ctx context.Context, key tasklog.Key) (int64, error) {
	size, err := r.Logs.Size(ctx, key)
	if err == nil && size == 0 && r.Folder != "" {
		return tasklog.Folder(r.Folder).Size(ctx, key)
	}
	return size, err
}

// record is the database's record of where key's log was stored, nil
// when there is none (the try wrote nothing).
func (r Recorded) record(ctx context.Context, key tasklog.Key) (*store.TaskLog, error) {
	name, err := tasklog.Name(key)
	if err != nil {
		return nil, err
	}
	rec, err := r.Store.TaskLogGet(ctx, name)
	if errors.Is(err, core.ErrNotFound) {
		return nil, nil
	}
	return rec, err
}

// fix is the advice every missing log ends with.
const fix = "; to read every try's log from every api-server and the CLI, set [logging] log_store = database " +
	"or remote_base_log_folder (docs/deployment.md#task-logs)"

// reason says where a recorded log went and why it is not here.
func (r Recorded) reason(rec *store.TaskLog) string {
	switch {
	case rec.Kind == store.TaskLogFolder && r.Kind != store.TaskLogFolder:
		return fmt.Sprintf("was stored in the log folder %s (while [logging] log_store was folder); read it there", rec.Location)
	case rec.Kind == store.TaskLogFolder && rec.Location != r.Location:
		return fmt.Sprintf("was stored in the log folder %s of another api-server, which this one (%s) does not read: "+
			"read it there, or share [logging] base_log_folder between api-servers", rec.Location, r.Location) + fix
	case rec.Kind == store.TaskLogFolder:
		return fmt.Sprintf("was stored in this log folder (%s) but is no longer there: deleted or moved by hand", rec.Location)
	case rec.PrunedAt != nil:
		return fmt.Sprintf("was deleted from %s on %s, [logging] log_retention after its upload", rec.Location,
			rec.PrunedAt.UTC().Format(time.RFC3339))
	case rec.Kind == store.TaskLogRemote && rec.StoredAt != nil && !r.readsObject(rec.Location):
		here := "no [logging] remote_base_log_folder is set here"
		if r.Kind == store.TaskLogRemote {
			here = "this process's [logging] remote_base_log_folder is " + r.Location
		}
		return fmt.Sprintf("was uploaded whole to %s, which this process does not read (%s): set remote_base_log_folder "+
			"to the store it was uploaded to", rec.Location, here)
	case rec.Kind == store.TaskLogRemote && rec.StoredAt != nil:
		return fmt.Sprintf("was uploaded whole to %s, but the object is not there: deleted from the store", rec.Location)
	case rec.Attempts > 0:
		return fmt.Sprintf("could not be uploaded to %s (%d attempts; the last failed with: %s) and its chunks are no longer in the database",
			rec.Location, rec.Attempts, rec.Error)
	default:
		return "was stored in the database, but its chunks are no longer there: deleted after [logging] log_retention"
	}
}

// readsObject reports whether objectURL (a record's Location, an object
// of a remote store) lies in the remote store this process reads.
func (r Recorded) readsObject(objectURL string) bool {
	if r.Kind != store.TaskLogRemote {
		return false
	}
	base, _, _ := strings.Cut(r.Location, "?")
	object, _, _ := strings.Cut(objectURL, "?")
	return strings.HasPrefix(object, strings.TrimSuffix(base, "/")+"/")
}
