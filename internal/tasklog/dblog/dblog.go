// Package dblog keeps task logs in the metadata database ([logging]
// log_store = database): the api-servers' side of tasklog.Logs, apart from
// package tasklog so that the task side (workers) never links the store.
package dblog

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
)

// Database keeps logs as chunks in the metadata database, so that every
// api-server and the CLI read every try's log, live and after.
type Database struct {
	Store DatabaseStore
	Clock core.Clock
	// InTx says Store is a transaction that stores a try's end with the end
	// of its log (logstore.Recorded.InTx): an append at offset 0, the
	// whole log, goes with the transaction's next statement
	// (store.TaskLogAppendParams.Deferred), and the length it returns is
	// its own end.
	InTx bool
}

// DatabaseStore is what Database needs of the store (package store
// documents each method).
type DatabaseStore interface {
	TaskLogAppend(ctx context.Context, p *store.TaskLogAppendParams) (int64, error)
	TaskLogRead(ctx context.Context, key string, offset int64, limit int) ([]byte, int64, error)
	TaskLogSize(ctx context.Context, key string) (int64, error)
}

// AppendAt implements tasklog.Logs.
func (d Database) AppendAt(ctx context.Context, key tasklog.Key, offset int64, data []byte) (int64, error) {
	if offset < 0 {
		return 0, fmt.Errorf("append to task log: negative offset %d: %w", offset, core.ErrInvalid)
	}
	name, err := tasklog.Name(key)
	if err != nil {
		return 0, err
	}
	clk := d.Clock
	if clk == nil {
		clk = core.SystemClock{}
	}
	next, err := d.Store.TaskLogAppend(ctx, &store.TaskLogAppendParams{Key: name, Offset: offset, Data: data, Now: clk.Now(),
		Deferred: d.InTx && offset == 0})
	if errors.Is(err, core.ErrConflict) && next < offset {
		return next, &tasklog.GapError{Key: key, Offset: offset, Size: next}
	}
	return next, err
}

// Read implements tasklog.Logs.
func (d Database) Read(ctx context.Context, key tasklog.Key, offset int64) ([]byte, int64, error) {
	if offset < 0 {
		return nil, 0, fmt.Errorf("read task log: negative offset %d: %w", offset, core.ErrInvalid)
	}
	name, err := tasklog.Name(key)
	if err != nil {
		return nil, offset, err
	}
	return d.Store.TaskLogRead(ctx, name, offset, tasklog.MaxReadChunk)
}

// Size implements tasklog.Logs.
func (d Database) Size(ctx context.Context, key tasklog.Key) (int64, error) {
	name, err := tasklog.Name(key)
	if err != nil {
		return 0, err
	}
	return d.Store.TaskLogSize(ctx, name)
}
