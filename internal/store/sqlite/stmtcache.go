package sqlite

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	sqlite "modernc.org/sqlite"
)

// stmtCacheSize bounds the statements each connection keeps compiled. The
// store's SQL is mostly constant text (a few hundred statements); list
// queries with optional filters add some variants, the rare one-off
// (a multi-row INSERT of an unusual size) evicts the least recently used.
const stmtCacheSize = 256

// cachingConnector opens modernc SQLite connections that keep their
// compiled statements. database/sql hands a driver that cannot execute
// text directly (no ExecerContext/QueryerContext) a prepare → run → close
// sequence for every statement; this driver answers the prepare from the
// connection's cache and the close leaves the statement compiled. Without
// it every statement is parsed and planned again on every call: about a
// quarter of the engine's CPU in a chain of Go tasks (docs/performance-history.md).
type cachingConnector struct {
	dsn   string
	drv   *sqlite.Driver
	wrote func() // the writer's: told of every statement it prepares (checkpointer.noteWrite)
}

func (c cachingConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	if err := persistWAL(conn); err != nil {
		return nil, errors.Join(err, conn.Close())
	}
	return &cachingConn{conn: conn, byQuery: map[string]*list.Element{}, lru: list.New(), wrote: c.wrote}, nil
}

func (c cachingConnector) Driver() driver.Driver { return c.drv }

// persistWAL keeps the -wal and -shm files when the last connection
// closes: it checkpoints as before, then empties the WAL (its
// journal_size_limit) instead of deleting the two files, which the next
// process would create again. On this machine's ext4 a file's creation and
// removal cost up to a millisecond each, and every command opens the
// database (docs/performance-history.md).
func persistWAL(conn driver.Conn) error {
	fc, ok := conn.(sqlite.FileControl)
	if !ok {
		return nil
	}
	if _, err := fc.FileControlPersistWAL("main", 1); err != nil {
		return fmt.Errorf("keep the sqlite WAL file: %w", err)
	}
	return nil
}

// sqliteConn is what the cache needs of modernc's connection.
type sqliteConn interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.ConnBeginTx
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachingConn is one connection and its compiled statements, most recently
// used first. database/sql uses a connection from one goroutine at a time,
// so it needs no lock.
type cachingConn struct {
	conn    driver.Conn
	byQuery map[string]*list.Element // → *cachedStmt
	lru     *list.List
	wrote   func() // nil but on the writer
}

// cachedStmt is a compiled statement and the number of handles database/sql
// holds on it. A statement is handed out again only when no handle is open:
// the rows of a query still being read keep theirs, so the same text run
// again meanwhile (a nested query) gets a statement of its own.
type cachedStmt struct {
	inner   driver.Stmt
	query   string
	refs    int
	evicted bool // out of the cache: closed when its last handle is
}

func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if c.wrote != nil {
		c.wrote()
	}
	if el, ok := c.byQuery[query]; ok {
		st := el.Value.(*cachedStmt)
		if st.refs == 0 {
			c.lru.MoveToFront(el)
			st.refs++
			return &stmtHandle{st: st}, nil
		}
		return c.prepare(ctx, query) // busy: a one-off statement
	}
	inner, err := c.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	st := &cachedStmt{inner: inner, query: query, refs: 1}
	c.byQuery[query] = c.lru.PushFront(st)
	if c.lru.Len() > stmtCacheSize {
		c.evict(c.lru.Back())
	}
	return &stmtHandle{st: st}, nil
}

func (c *cachingConn) prepare(ctx context.Context, query string) (driver.Stmt, error) {
	query = fixedPlan(query)
	if p, ok := c.conn.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	return c.conn.Prepare(query)
}

// fixedPlan writes a statement's "LIMIT $n" as "LIMIT +$n", the same
// limit. SQLite plans a LIMIT that is a bare parameter for the value bound
// to it, and so compiles the statement again whenever that value changes,
// its first bind included (database/sql prepares, then binds): every
// statement with a limit (the claims, the scheduler's reads, the list
// pages) was compiled twice as a process first ran it, 2 ms of a one-task
// `weir dags test`, and a claim again for each new number of free slots.
// Behind the unary plus the planner reads the limit as the statement
// runs; the plans the stores' tests and benchmarks run are the same, but
// for list pages sorted on an indexed column, which now read that index
// in order rather than sort the whole table (docs/performance-history.md).
func fixedPlan(query string) string {
	return strings.ReplaceAll(query, "LIMIT $", "LIMIT +$")
}

// evict drops a statement from the cache, closing it unless a handle is
// still open (then its last handle closes it).
func (c *cachingConn) evict(el *list.Element) {
	st := el.Value.(*cachedStmt)
	c.lru.Remove(el)
	delete(c.byQuery, st.query)
	st.evicted = true
	if st.refs == 0 {
		_ = st.inner.Close() // a statement failing to finalize has nothing left to release
	}
}

func (c *cachingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// Close closes every cached statement, then the connection.
func (c *cachingConn) Close() error {
	var errs []error
	for el := c.lru.Front(); el != nil; el = el.Next() {
		errs = append(errs, el.Value.(*cachedStmt).inner.Close())
	}
	c.lru.Init()
	clear(c.byQuery)
	return errors.Join(append(errs, c.conn.Close())...)
}

func (c *cachingConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.conn.(sqliteConn).BeginTx(ctx, opts)
}

func (c *cachingConn) Ping(ctx context.Context) error { return c.conn.(sqliteConn).Ping(ctx) }

func (c *cachingConn) ResetSession(ctx context.Context) error {
	return c.conn.(sqliteConn).ResetSession(ctx)
}

func (c *cachingConn) IsValid() bool { return c.conn.(sqliteConn).IsValid() }

// stmtHandle is one handle on a cached statement; closing it releases the
// handle and leaves the statement compiled.
type stmtHandle struct {
	st     *cachedStmt
	closed bool
}

func (h *stmtHandle) Close() error {
	if h.closed {
		return nil
	}
	h.closed = true
	h.st.refs--
	if h.st.evicted && h.st.refs == 0 {
		return h.st.inner.Close()
	}
	return nil
}

func (h *stmtHandle) NumInput() int { return h.st.inner.NumInput() }

func (h *stmtHandle) Exec(args []driver.Value) (driver.Result, error) {
	return h.st.inner.Exec(args) //nolint:staticcheck // database/sql calls ExecContext; this completes driver.Stmt
}

func (h *stmtHandle) Query(args []driver.Value) (driver.Rows, error) {
	return h.st.inner.Query(args) //nolint:staticcheck // database/sql calls QueryContext; this completes driver.Stmt
}

func (h *stmtHandle) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return h.st.inner.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (h *stmtHandle) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return h.st.inner.(driver.StmtQueryContext).QueryContext(ctx, args)
}
