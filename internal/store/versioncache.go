package store

import (
	"context"
	"sync"

	"github.com/weirflow/weir/internal/core"
)

// maxCachedVersions bounds a VersionCache; it is emptied when full.
const maxCachedVersions = 1024

// DagVersionGetter is the store method a VersionCache reads through.
type DagVersionGetter interface {
	DagVersionGet(ctx context.Context, id int64) (*core.DagVersion, error)
}

// VersionCache keeps decoded DAG versions by id. A dag_version row never
// changes and its id is never reused (an identity column on PostgreSQL,
// AUTOINCREMENT on SQLite), so an entry never goes stale. Without it every
// start of a try decoded the whole serialized DAG, which for a DAG of 1,000
// tasks was the largest single cost of starting a try (docs/performance-history.md).
// Entries are shared: callers must treat them as read-only. The zero value
// is ready to use.
type VersionCache struct {
	mu sync.Mutex
	m  map[int64]*core.DagVersion
}

// Get returns version id, from the cache or read through st.
func (c *VersionCache) Get(ctx context.Context, st DagVersionGetter, id int64) (*core.DagVersion, error) {
	c.mu.Lock()
	v, ok := c.m[id]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := st.DagVersionGet(ctx, id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedVersions {
		c.m = map[int64]*core.DagVersion{}
	}
	c.m[id] = v
	c.mu.Unlock()
	return v, nil
}
