package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// The backend methods of weir dags show, next-execution and delete, local
// and REST.

// DagDefinition implements backend.
func (b *localBackend) DagDefinition(ctx context.Context, dagID string) (*api.DagDefinition, error) {
	v, err := b.svc.Store().DagVersionLatest(ctx, dagID)
	if err != nil {
		return nil, fmt.Errorf("dag_id %q: %w", dagID, err)
	}
	return &api.DagDefinition{DagID: dagID, VersionNumber: v.Version, Definition: v.Spec}, nil
}

// DagNextRuns implements backend.
func (b *localBackend) DagNextRuns(ctx context.Context, dagID string, n int) (*api.NextRunCollection, error) {
	d, err := b.DagGet(ctx, dagID)
	if err != nil {
		return nil, err
	}
	ivs, err := b.svc.NextDataIntervals(ctx, dagID, n)
	if err != nil {
		return nil, err
	}
	out := &api.NextRunCollection{DagID: d.DagID, IsPaused: d.IsPaused, NextRuns: make([]api.NextRun, len(ivs))}
	for i, iv := range ivs {
		out.NextRuns[i] = api.NextRun{LogicalDate: iv.Start, DataIntervalStart: iv.Start, DataIntervalEnd: iv.End}
	}
	return out, nil
}

// DagDelete implements backend.
func (b *localBackend) DagDelete(ctx context.Context, dagID string) (int, error) {
	return b.svc.DeleteDag(ctx, b.actor, dagID)
}

// DagDefinition implements backend (GET /dags/{dag_id}/definition).
func (b *restBackend) DagDefinition(ctx context.Context, dagID string) (*api.DagDefinition, error) {
	var out api.DagDefinition
	if err := b.c.Get(ctx, "/dags/"+seg(dagID)+"/definition", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DagNextRuns implements backend (GET /dags/{dag_id}/nextRuns?limit=n).
func (b *restBackend) DagNextRuns(ctx context.Context, dagID string, n int) (*api.NextRunCollection, error) {
	if n < 1 {
		return nil, fmt.Errorf("number of runs %d: must be at least 1: %w", n, core.ErrInvalid)
	}
	var out api.NextRunCollection
	if err := b.c.Get(ctx, "/dags/"+seg(dagID)+"/nextRuns", url.Values{"limit": {strconv.Itoa(n)}}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DagDelete implements backend (DELETE /dags/{dag_id}); the number of runs
// deleted is the number the DAG had just before.
func (b *restBackend) DagDelete(ctx context.Context, dagID string) (int, error) {
	_, n, err := b.DagRunList(ctx, &store.DagRunListParams{DagID: dagID, Page: store.Page{Limit: 1}})
	if err != nil {
		return 0, err
	}
	return n, b.c.Do(ctx, http.MethodDelete, "/dags/"+seg(dagID), nil, nil, nil)
}
