package logstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/tasklog"
	"github.com/weirflow/weir/internal/tasklog/dblog"
)

// Remote keeps a try's log as chunks in the database while the try runs
// (Live: read live from any api-server) and, once the try has ended and
// the Uploader has stored it, as one object named as the log folder names
// the file (tasklog.Name) in Objects. Callbacks' logs stay in the
// database.
type Remote struct {
	Live    dblog.Database
	Objects objstore.Store
	URL     string // Objects' URL without credentials, for records and errors
	Store   Store
}

// AppendAt implements tasklog.Logs: a running try's chunks go to the
// database.
func (r *Remote) AppendAt(ctx context.Context, key tasklog.Key, offset int64, data []byte) (int64, error) {
	return r.Live.AppendAt(ctx, key, offset, data)
}

// Read implements tasklog.Logs: from the object once the log is uploaded,
// from the database before. A log uploaded but missing from the store
// reads as not found (Recorded explains it).
func (r *Remote) Read(ctx context.Context, key tasklog.Key, offset int64) ([]byte, int64, error) {
	obj, uploaded, err := r.object(ctx, key)
	if err == nil && !uploaded {
		data, next, lerr := r.Live.Read(ctx, key, offset)
		if !errors.Is(lerr, core.ErrNotFound) {
			return data, next, lerr
		}
		// Uploaded since the record was read? The uploader deletes the
		// chunks as it marks the log uploaded.
		if obj, uploaded, err = r.object(ctx, key); err == nil && !uploaded {
			return data, next, lerr
		}
	}
	if err != nil {
		return nil, offset, err
	}
	if offset >= int64(len(obj)) {
		return nil, offset, nil
	}
	end := min(int64(len(obj)), offset+tasklog.MaxReadChunk)
	return obj[offset:end], end, nil
}

// Size implements tasklog.Logs.
func (r *Remote) Size(ctx context.Context, key tasklog.Key) (int64, error) {
	if key.Callback == 0 {
		name, err := tasklog.Name(key)
		if err != nil {
			return 0, err
		}
		rec, err := r.Store.TaskLogGet(ctx, name)
		switch {
		case err == nil && rec.StoredAt != nil:
			return rec.Size, nil
		case err != nil && !errors.Is(err, core.ErrNotFound):
			return 0, err
		}
	}
	return r.Live.Size(ctx, key)
}

// object returns key's uploaded log and true, or false when it is not
// uploaded (yet). A whole log is fetched per read: logs are read rarely and
// a range read would need more of package objstore.
func (r *Remote) object(ctx context.Context, key tasklog.Key) ([]byte, bool, error) {
	if key.Callback != 0 {
		return nil, false, nil
	}
	name, err := tasklog.Name(key)
	if err != nil {
		return nil, false, err
	}
	rec, err := r.Store.TaskLogGet(ctx, name)
	if errors.Is(err, core.ErrNotFound) || (err == nil && rec.StoredAt == nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	data, err := r.Objects.Get(ctx, name)
	if err != nil {
		return nil, true, fmt.Errorf("read task log %s from %s: %w", name, r.URL, err)
	}
	return data, true, nil
}

// ObjectURL names key's object in the remote store, as records keep it.
func (r *Remote) ObjectURL(name string) string {
	base, query, _ := strings.Cut(r.URL, "?")
	u := strings.TrimSuffix(base, "/") + "/" + name
	if query != "" {
		u += "?" + query
	}
	return u
}
