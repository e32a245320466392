package tasklog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// Logs is where an api-server keeps task logs: a folder (Folder, which
// every api-server must share) or the metadata database (Database,
// [logging] log_store = database), read and written the same way.
type Logs interface {
	// AppendAt stores data as the bytes of key's log from offset on and
	// returns the log's length, appending only what the log does not
	// hold yet; a chunk past the end is a *GapError.
	AppendAt(ctx context.Context, key Key, offset int64, data []byte) (int64, error)
	// Read returns up to MaxReadChunk bytes of key's log from offset and
	// the offset to continue from; a missing log wraps core.ErrNotFound.
	Read(ctx context.Context, key Key, offset int64) ([]byte, int64, error)
	// Size returns how many bytes key's log holds (0 when none).
	Size(ctx context.Context, key Key) (int64, error)
}

// Folder keeps logs as files under a base folder (package layout).
type Folder string

// AppendAt implements Logs.
func (f Folder) AppendAt(_ context.Context, key Key, offset int64, data []byte) (int64, error) {
	return AppendAt(string(f), key, offset, data)
}

// Read implements Logs.
func (f Folder) Read(_ context.Context, key Key, offset int64) ([]byte, int64, error) {
	return Read(string(f), key, offset)
}

// Size implements Logs.
func (f Folder) Size(_ context.Context, key Key) (int64, error) { return Size(string(f), key) }

// Database keeps logs as chunks in the metadata database, so that every
// api-server and the CLI read every try's log, live and after.
type Database struct {
	Store DatabaseStore
	Clock core.Clock
}

// DatabaseStore is what Database needs of the store (package store
// documents each method).
type DatabaseStore interface {
	TaskLogAppend(ctx context.Context, p *store.TaskLogAppendParams) (int64, error)
	TaskLogRead(ctx context.Context, key string, offset int64, limit int) ([]byte, int64, error)
	TaskLogSize(ctx context.Context, key string) (int64, error)
}

// AppendAt implements Logs.
func (d Database) AppendAt(ctx context.Context, key Key, offset int64, data []byte) (int64, error) {
	if offset < 0 {
		return 0, fmt.Errorf("append to task log: negative offset %d: %w", offset, core.ErrInvalid)
	}
	name, err := Name(key)
	if err != nil {
		return 0, err
	}
	clk := d.Clock
	if clk == nil {
		clk = core.SystemClock{}
	}
	next, err := d.Store.TaskLogAppend(ctx, &store.TaskLogAppendParams{Key: name, Offset: offset, Data: data, Now: clk.Now()})
	if errors.Is(err, core.ErrConflict) && next < offset {
		return next, &GapError{Key: key, Offset: offset, Size: next}
	}
	return next, err
}

// Read implements Logs.
func (d Database) Read(ctx context.Context, key Key, offset int64) ([]byte, int64, error) {
	if offset < 0 {
		return nil, 0, fmt.Errorf("read task log: negative offset %d: %w", offset, core.ErrInvalid)
	}
	name, err := Name(key)
	if err != nil {
		return nil, offset, err
	}
	return d.Store.TaskLogRead(ctx, name, offset, MaxReadChunk)
}

// Size implements Logs.
func (d Database) Size(ctx context.Context, key Key) (int64, error) {
	name, err := Name(key)
	if err != nil {
		return 0, err
	}
	return d.Store.TaskLogSize(ctx, name)
}

// Name returns key's log path relative to the log folder, with forward
// slashes: the name a Database keeps it under.
func Name(key Key) (string, error) {
	p, err := Path("/", key)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(p[1:]), nil
}
