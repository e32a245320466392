package ui

import (
	"context"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// Reader is what the UI's pages read from the store (package store
// documents each method): reads only, since every change goes through the
// service layer. Every store.Store satisfies it.
type Reader interface {
	DagCount(ctx context.Context, p *store.DagListParams) (int, error)
	DagList(ctx context.Context, p *store.DagListParams) ([]core.DagModel, error)
	DagRunRecent(ctx context.Context, p *store.DagRunRecentParams) ([]core.DagRun, error)
	ImportErrorCount(ctx context.Context, p *store.ImportErrorListParams) (int, error)
	ImportErrorList(ctx context.Context, p *store.ImportErrorListParams) ([]core.ImportError, error)
	UserGet(ctx context.Context, username string) (*core.User, error)
}
