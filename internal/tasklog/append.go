package tasklog

import (
	"fmt"
	"syscall"

	"github.com/weirflow/weir/internal/core"
)

// GapError is AppendAt's refusal of a chunk that starts past the end of the
// log: the bytes between Size and Offset were never stored. It wraps
// core.ErrConflict.
type GapError struct {
	Key    Key
	Offset int64 // where the chunk starts
	Size   int64 // the log's length: the offset a chunk must start at
}

func (e *GapError) Error() string {
	return fmt.Sprintf("log chunk of %s/%s/%s try %d starts at byte %d, but the log has %d bytes: send the log from byte %d",
		e.Key.DagID, e.Key.RunID, e.Key.TaskID, e.Key.TryNumber, e.Offset, e.Size, e.Size)
}

// Unwrap makes a gap match core.ErrConflict.
func (e *GapError) Unwrap() error { return core.ErrConflict }

// AppendAt stores data as the bytes of key's log from offset on, and
// returns the log's length afterwards. It appends only what the log does
// not hold yet: a chunk it already holds entirely (a repeated request whose
// answer was lost) changes nothing, and a chunk it holds in part appends
// the rest. A chunk that starts past the end is refused with a *GapError
// naming the length. The log's length is the only state, read from the
// file under an exclusive lock (flock), so any number of api-servers
// sharing the log folder, and a restarted one, agree on it. It is not
// checked that the bytes already held are the ones sent again: one try's
// log has one writer, which never sends different bytes for an offset.
func AppendAt(base string, key Key, offset int64, data []byte) (int64, error) {
	if offset < 0 {
		return 0, fmt.Errorf("append to task log: negative offset %d: %w", offset, core.ErrInvalid)
	}
	f, err := Open(base, key)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()                                    // closing releases the lock
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil { //nolint:gosec // a file descriptor fits an int
		return 0, fmt.Errorf("lock task log %s: %w", f.Name(), err)
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat task log %s: %w", f.Name(), err)
	}
	size := fi.Size()
	end := offset + int64(len(data))
	switch {
	case offset > size:
		return size, &GapError{Key: key, Offset: offset, Size: size}
	case end <= size:
		return size, nil
	}
	n, err := f.Write(data[size-offset:])
	if err != nil {
		return size + int64(n), fmt.Errorf("append to task log %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return end, fmt.Errorf("close task log %s: %w", f.Name(), err)
	}
	return end, nil
}
