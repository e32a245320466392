// Package logstore is where api-servers keep the task logs workers ship
// ([logging] log_store, remote_base_log_folder; docs/deployment.md#task-logs),
// behind one tasklog.Logs: a folder, the metadata database, or a remote
// store (an S3-compatible bucket or a shared folder, through package
// objstore) that holds each try's whole log once the try has ended, the
// database holding it while it runs. Each keeps a record in the database
// of where a try's log was stored, so that a read tells a try that wrote
// nothing (an empty log) from a log that is not where the reader looks
// (a *tasklog.MissingError naming where it is and the setting to fix).
package logstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
	"github.com/weirflow/weir/internal/tasklog/dblog"
)

// Store is what the log stores need of the metadata store (package store
// documents each method).
type Store interface {
	dblog.DatabaseStore
	TaskLogRecord(ctx context.Context, p *store.TaskLog) error
	TaskLogGet(ctx context.Context, key string) (*store.TaskLog, error)
	TaskLogsToUpload(ctx context.Context, now time.Time, limit int) ([]store.TaskLog, error)
	TaskLogLease(ctx context.Context, key string, now, until time.Time) (bool, error)
	TaskLogStored(ctx context.Context, key, location string, size int64, now time.Time) error
	TaskLogUploadFailed(ctx context.Context, key, reason string, retryAt time.Time) error
	TaskLogsStoredBefore(ctx context.Context, before time.Time, limit int) ([]store.TaskLog, error)
	TaskLogPruned(ctx context.Context, key string, now time.Time) error
}

// Options says where logs go: [logging] of the configuration.
type Options struct {
	// Database keeps logs in the database (log_store = database); else
	// they are files under Folder. With Database or Remote, the logs
	// recorded as stored in Folder (while log_store was folder) are read
	// from it.
	Database bool
	Folder   string
	// Remote is remote_base_log_folder: an s3:// URL or a shared folder's
	// absolute path (or file:// URL); "" = none. It needs Database.
	Remote string
}

// Open returns the task log store opts name, and the remote store (nil
// without one) whose uploads and retention the scheduler runs (Uploader).
// It contacts no server.
func Open(opts Options, st Store, clk core.Clock) (tasklog.Logs, *Remote, error) {
	if clk == nil {
		clk = core.SystemClock{}
	}
	db := dblog.Database{Store: st, Clock: clk}
	switch {
	case opts.Remote != "":
		objects, url, err := OpenRemote(opts.Remote)
		if err != nil {
			return nil, nil, err
		}
		r := &Remote{Live: db, Objects: objects, URL: url, Store: st}
		return Recorded{Logs: r, Store: st, Kind: store.TaskLogRemote, Location: url, Clock: clk, Folder: opts.Folder}, r, nil
	case opts.Database:
		return Recorded{Logs: db, Store: st, Kind: store.TaskLogDatabase, Clock: clk, Folder: opts.Folder}, nil, nil
	default:
		return Recorded{Logs: tasklog.Folder(opts.Folder), Store: st, Kind: store.TaskLogFolder,
			Location: FolderLocation(opts.Folder), Clock: clk}, nil, nil
	}
}

// OpenRemote opens remote_base_log_folder: an s3:// URL (credentials as
// the object-store state backend takes them: in the URL or the AWS_*
// variables), or a shared folder as an absolute path or file:// URL. It
// returns the store and its URL without credentials.
func OpenRemote(raw string) (objstore.Store, string, error) {
	u, err := objstore.Location(raw)
	if err != nil {
		return nil, "", fmt.Errorf("[logging] remote_base_log_folder: %w", err)
	}
	objects, err := objstore.Open(u)
	if err != nil {
		return nil, "", fmt.Errorf("[logging] remote_base_log_folder: %w", err)
	}
	return objects, objstore.Redact(u), nil
}

// FolderLocation names a log folder as records keep it: this machine's
// host name and the folder's absolute path.
func FolderLocation(folder string) string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown-host"
	}
	if abs, err := filepath.Abs(folder); err == nil {
		folder = abs
	}
	return host + ":" + folder
}
