// Package sqlcursor holds the sql_cursor trigger: a streaming trigger that
// runs one query on a PostgreSQL or SQLite connection and yields its rows
// in chunks, one event per chunk, in the query's order
// (docs/triggers.md#sql_cursor). Connection URIs and drivers are the sql
// operator's.
package sqlcursor

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/trigger"
)

// Chunk sizes.
const (
	// DefaultChunkSize is how many rows one event holds by default.
	DefaultChunkSize = 100
	// MaxChunkSize bounds chunk_size (an event is at most 1 MiB).
	MaxChunkSize = 10_000
)

// Type is the sql_cursor trigger. kwargs: {"conn_id": "warehouse", "sql":
// "SELECT id, total FROM orders ORDER BY id", "chunk_size": 500}.
var Type = trigger.Type{
	Name:    "sql_cursor",
	Summary: "runs a query once and yields its rows in chunks, one event per chunk (a stream)",
	New:     newTrigger,
	Uses:    trigger.UseDeferral | trigger.UseStream,
}

// cursorTrigger is a built sql_cursor trigger.
type cursorTrigger struct {
	connID, query string
	chunk         int
}

func newTrigger(raw json.RawMessage) (trigger.Trigger, error) {
	var k struct {
		ConnID    *string `json:"conn_id"`
		SQL       *string `json:"sql"`
		ChunkSize *int    `json:"chunk_size"`
	}
	if err := trigger.DecodeKwargs(raw, &k); err != nil {
		return nil, err
	}
	switch {
	case k.ConnID == nil || *k.ConnID == "":
		return nil, trigger.Invalid("conn_id", "is required (a postgres:// or sqlite:// connection)")
	case k.SQL == nil || strings.TrimSpace(*k.SQL) == "":
		return nil, trigger.Invalid("sql", "is required (one query returning rows in a stable order, such as SELECT ... ORDER BY id)")
	}
	c := &cursorTrigger{connID: *k.ConnID, query: *k.SQL, chunk: DefaultChunkSize}
	if k.ChunkSize != nil {
		if *k.ChunkSize < 1 || *k.ChunkSize > MaxChunkSize {
			return nil, trigger.Invalid("chunk_size", "must be between 1 and %d rows, got %d", MaxChunkSize, *k.ChunkSize)
		}
		c.chunk = *k.ChunkSize
	}
	return c, nil
}

// Payload is one event: the next rows, column name to value.
type Payload struct {
	Rows []map[string]any `json:"rows"`
}

// Run runs the query once and emits its rows chunk by chunk. Resuming a
// stream after its last persisted event, it skips the rows those events
// held: the query must return its rows in a stable order (ORDER BY).
func (c *cursorTrigger) Run(ctx context.Context, rt *trigger.Runtime) error {
	u, err := rt.Connection(ctx, c.connID)
	if err != nil {
		return err
	}
	driver, dsn, err := operator.SQLDSN(u)
	if err != nil {
		return trigger.Permanent(fmt.Errorf("connection %q: %w", c.connID, err))
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return trigger.Permanent(fmt.Errorf("open connection %q: %w", c.connID, err))
	}
	defer func() { _ = db.Close() }()
	db.SetMaxOpenConns(1)
	rows, err := db.QueryContext(ctx, c.query)
	if err != nil {
		return fmt.Errorf("sql_cursor on connection %q: %w", c.connID, err)
	}
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	if err != nil || len(cols) == 0 {
		return trigger.Permanent(fmt.Errorf("sql_cursor on connection %q: the statement must be a query returning columns (%w)", c.connID, err))
	}
	skip := int64(0)
	if rt.Stream != nil {
		skip = (rt.Stream.LastIndex + 1) * int64(c.chunk)
		if skip > 0 {
			rt.Logf("resuming after event %d: skipping the first %d rows", rt.Stream.LastIndex, skip)
		}
	}
	chunk := make([]map[string]any, 0, c.chunk)
	for n := int64(0); rows.Next(); n++ {
		if n < skip {
			continue
		}
		vals, err := operator.ScanSQLRow(rows, len(cols))
		if err != nil {
			return fmt.Errorf("sql_cursor on connection %q: read row %d: %w", c.connID, n+1, err)
		}
		row := make(map[string]any, len(cols))
		for i, col := range cols {
			row[col] = vals[i]
		}
		if chunk = append(chunk, row); len(chunk) == c.chunk {
			if err := rt.Emit(ctx, Payload{Rows: chunk}); err != nil {
				return err
			}
			chunk = make([]map[string]any, 0, c.chunk)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sql_cursor on connection %q: %w", c.connID, err)
	}
	if len(chunk) > 0 {
		return rt.Emit(ctx, Payload{Rows: chunk})
	}
	return nil
}
