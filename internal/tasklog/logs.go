package tasklog

import (
	"context"
	"path/filepath"
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

// Name returns key's log path relative to the log folder, with forward
// slashes: the name a Database keeps it under.
func Name(key Key) (string, error) {
	p, err := Path("/", key)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(p[1:]), nil
}

// Each reads key's log from offset on, a piece at a time (a Read may stop
// short of MaxReadChunk: the database store's stops at a number of
// chunks), and passes each piece to fn, until offset upto (-1: the log's
// end) or a read that brings nothing more. It returns the offset after the
// last piece; a log without any byte wraps core.ErrNotFound (WroteNothing).
func Each(ctx context.Context, logs Logs, key Key, offset, upto int64, fn func([]byte) error) (int64, error) {
	for upto < 0 || offset < upto {
		data, next, err := logs.Read(ctx, key, offset)
		if err != nil {
			return offset, err
		}
		if next <= offset {
			break
		}
		if err := fn(data); err != nil {
			return offset, err
		}
		offset = next
	}
	return offset, nil
}
