// Package tasklog locates, appends to and reads per-try task logs in
// Airflow's layout under a base folder:
//
//	dag_id=<d>/run_id=<r>/task_id=<t>/[map_index=<n>/]attempt=<try>.log
//
// Path components are escaped so that no id can climb out of the base folder.
package tasklog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/sysfile"
)

// MaxReadChunk is the most Read returns in one call; callers tail by calling
// again from the returned offset.
const MaxReadChunk = 1 << 20

// Key identifies one try's log, or with Callback set one attempt of a
// callback's (TryNumber is then the attempt; TaskID and MapIndex are not
// part of the path):
//
//	dag_id=<d>/run_id=<r>/callback_id=<id>/attempt=<n>.log
type Key struct {
	DagID     string
	RunID     string
	TaskID    string
	MapIndex  int // core.NoMapIndex when unmapped
	TryNumber int
	Callback  int64 // a callback's id; 0 = a task's try
}

// CallbackKey returns the log key of one attempt of a callback.
func CallbackKey(cb *core.Callback, attempt int) Key {
	return Key{DagID: cb.DagID, RunID: cb.RunID, MapIndex: core.NoMapIndex, TryNumber: attempt, Callback: cb.ID}
}

// KeyOf returns the log key of a task instance's current try.
func KeyOf(ti *core.TaskInstance) Key {
	return Key{DagID: ti.DagID, RunID: ti.RunID, TaskID: ti.TaskID, MapIndex: ti.MapIndex, TryNumber: ti.TryNumber}
}

// escaper makes an id safe as one path component. It is injective: '%' is
// escaped too, so distinct ids never share a file.
var escaper = strings.NewReplacer("%", "%25", "/", "%2F", "\\", "%5C", "\x00", "%00")

// Path returns the log file of key under base.
func Path(base string, key Key) (string, error) {
	if key.Callback > 0 {
		return callbackPath(base, key)
	}
	if key.DagID == "" || key.RunID == "" || key.TaskID == "" {
		return "", fmt.Errorf("task log path: dag_id, run_id and task_id are required: %w", core.ErrInvalid)
	}
	if key.TryNumber < 0 || key.MapIndex < core.NoMapIndex {
		return "", fmt.Errorf("task log path: try %d, map_index %d out of range: %w", key.TryNumber, key.MapIndex, core.ErrInvalid)
	}
	parts := []string{
		"dag_id=" + escaper.Replace(key.DagID),
		"run_id=" + escaper.Replace(key.RunID),
		"task_id=" + escaper.Replace(key.TaskID),
	}
	if key.MapIndex >= 0 {
		parts = append(parts, "map_index="+strconv.Itoa(key.MapIndex))
	}
	parts = append(parts, "attempt="+strconv.Itoa(key.TryNumber)+".log")
	rel := filepath.Join(parts...)
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("task log path %q escapes the log folder: %w", rel, core.ErrInvalid)
	}
	return filepath.Join(base, rel), nil
}

// callbackPath is Path for a callback's log.
func callbackPath(base string, key Key) (string, error) {
	if key.DagID == "" || key.RunID == "" || key.TryNumber < 1 {
		return "", fmt.Errorf("callback log path: dag_id, run_id and an attempt >= 1 are required: %w", core.ErrInvalid)
	}
	rel := filepath.Join("dag_id="+escaper.Replace(key.DagID), "run_id="+escaper.Replace(key.RunID),
		"callback_id="+strconv.FormatInt(key.Callback, 10), "attempt="+strconv.Itoa(key.TryNumber)+".log")
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("callback log path %q escapes the log folder: %w", rel, core.ErrInvalid)
	}
	return filepath.Join(base, rel), nil
}

// Append adds data to the end of key's log, creating folders and file.
func Append(base string, key Key, data []byte) error {
	f, err := Open(base, key)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("append to task log %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close task log %s: %w", f.Name(), err)
	}
	return nil
}

// Open opens key's log for appending, creating folders and file; a writer
// that ships many chunks of one try keeps the handle rather than appending
// chunk by chunk.
func Open(base string, key Key) (*os.File, error) {
	p, err := Path(base, key)
	if err != nil {
		return nil, err
	}
	return openPath(p)
}

// openPath opens the log file p for appending, creating folders and file.
func openPath(p string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return nil, fmt.Errorf("create task log folder: %w", err)
	}
	f, err := sysfile.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open task log: %w", err)
	}
	return f, nil
}

// Read returns up to MaxReadChunk bytes of key's log from offset and the
// offset to continue from. A missing log wraps core.ErrNotFound; an offset
// past the end returns no data and the same offset.
func Read(base string, key Key, offset int64) ([]byte, int64, error) {
	if offset < 0 {
		return nil, 0, fmt.Errorf("read task log: negative offset %d: %w", offset, core.ErrInvalid)
	}
	p, err := Path(base, key)
	if err != nil {
		return nil, 0, err
	}
	f, err := sysfile.OpenFile(p, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, offset, fmt.Errorf("task log of %s/%s/%s try %d: %w", key.DagID, key.RunID, key.TaskID, key.TryNumber, core.ErrNotFound)
	}
	if err != nil {
		return nil, offset, fmt.Errorf("open task log: %w", err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, offset, fmt.Errorf("stat task log: %w", err)
	}
	if offset >= fi.Size() {
		return nil, offset, nil
	}
	// Sized to what there is: `dags test` (log_store = folder) reads
	// every running try's log on every wake-up, and a chunk allocated
	// whole each time was most of its CPU.
	buf := make([]byte, min(MaxReadChunk, fi.Size()-offset))
	n, err := f.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, offset, fmt.Errorf("read task log %s: %w", p, err)
	}
	return buf[:n], offset + int64(n), nil
}

// Size returns how many bytes key's log holds (0 when there is none yet):
// where a resumed try's next step continues it.
func Size(base string, key Key) (int64, error) {
	p, err := Path(base, key)
	if err != nil {
		return 0, err
	}
	fi, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("task log size: %w", err)
	}
	return fi.Size(), nil
}
