package execapi

import (
	"context"
	"sync"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// maxCachedVersions bounds the version cache; it is cleared when full.
const maxCachedVersions = 1024

// versionCache keeps decoded DAG versions by id. A dag_version row never
// changes and its id is never reused (an identity column on PostgreSQL,
// AUTOINCREMENT on SQLite), so an entry never goes stale. Without it every
// /run decodes the whole serialized DAG, which for a DAG of 1,000 tasks was
// the largest single cost of starting a try (see docs/benchmarks.md).
// Entries are shared: callers must treat them as read-only.
type versionCache struct {
	mu sync.Mutex
	m  map[int64]*core.DagVersion
}

func (c *versionCache) get(ctx context.Context, st store.Store, id int64) (*core.DagVersion, error) {
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
