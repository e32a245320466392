// Package sqlcount wraps a database/sql driver to record every statement a
// store runs and how many rows the database returned for it, so that a test
// can show what one request read (a list page, not the whole table).
package sqlcount

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
)

// Stat is one statement run through a counted connection.
type Stat struct {
	Query string
	Rows  int // rows the database returned (0 for a write)
}

// Counter collects the Stats of every counted connection; safe for
// concurrent use.
type Counter struct {
	mu    sync.Mutex
	stats []*Stat
}

// Reset forgets what was recorded so far.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats = nil
}

// Stats returns the statements recorded since the last Reset, in order.
func (c *Counter) Stats() []Stat {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Stat, len(c.stats))
	for i, st := range c.stats {
		out[i] = *st
	}
	return out
}

// add records a statement.
func (c *Counter) add(query string) *Stat {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := &Stat{Query: query}
	c.stats = append(c.stats, st)
	return st
}

// row counts one row of st.
func (c *Counter) row(st *Stat) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st.Rows++
}

// OpenDB opens a pool over the driver registered as driverName whose
// connections to dsn record into c.
func OpenDB(driverName, dsn string, c *Counter) (*sql.DB, error) {
	probe, err := sql.Open(driverName, "")
	if err != nil {
		return nil, err
	}
	d := probe.Driver()
	if err := probe.Close(); err != nil {
		return nil, err
	}
	return sql.OpenDB(connector{d: d, dsn: dsn, c: c}), nil
}

type connector struct {
	d   driver.Driver
	dsn string
	c   *Counter
}

// Connect opens a counted connection.
func (k connector) Connect(context.Context) (driver.Conn, error) {
	cn, err := k.d.Open(k.dsn)
	if err != nil {
		return nil, err
	}
	return &conn{Conn: cn, c: k.c}, nil
}

// Driver returns the wrapped driver.
func (k connector) Driver() driver.Driver { return k.d }

// conn passes everything to the driver's connection, recording queries.
type conn struct {
	driver.Conn
	c *Counter
}

// QueryContext runs and records a query without preparing it.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	rows, err := q.QueryContext(ctx, query, args)
	if err != nil {
		return nil, err
	}
	return &countedRows{Rows: rows, c: c.c, st: c.c.add(query)}, nil
}

// ExecContext runs and records a write.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	c.c.add(query)
	return e.ExecContext(ctx, query, args)
}

// PrepareContext prepares a statement whose runs are recorded.
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	p, ok := c.Conn.(driver.ConnPrepareContext)
	if !ok {
		return nil, errors.New("sqlcount: the driver's connections must implement driver.ConnPrepareContext")
	}
	st, err := p.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &stmt{Stmt: st, query: query, c: c.c}, nil
}

// BeginTx starts a transaction on the driver's connection.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	b, ok := c.Conn.(driver.ConnBeginTx)
	if !ok {
		return nil, errors.New("sqlcount: the driver's connections must implement driver.ConnBeginTx")
	}
	return b.BeginTx(ctx, opts)
}

// CheckNamedValue lets the driver convert arguments as it would unwrapped.
func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// ResetSession passes the pool's reset to the driver's connection.
func (c *conn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

// stmt is a prepared statement whose runs are recorded.
type stmt struct {
	driver.Stmt
	query string
	c     *Counter
}

// QueryContext runs and records the prepared query.
func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := s.Stmt.(driver.StmtQueryContext)
	if !ok {
		return nil, errors.New("sqlcount: the driver's statements must implement driver.StmtQueryContext")
	}
	rows, err := q.QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	return &countedRows{Rows: rows, c: s.c, st: s.c.add(s.query)}, nil
}

// ExecContext runs and records the prepared write.
func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	e, ok := s.Stmt.(driver.StmtExecContext)
	if !ok {
		return nil, errors.New("sqlcount: the driver's statements must implement driver.StmtExecContext")
	}
	s.c.add(s.query)
	return e.ExecContext(ctx, args)
}

// CheckNamedValue lets the driver convert arguments as it would unwrapped.
func (s *stmt) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := s.Stmt.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// countedRows counts every row the database hands over.
type countedRows struct {
	driver.Rows
	c  *Counter
	st *Stat
}

// Next reads the next row and counts it.
func (r *countedRows) Next(dest []driver.Value) error {
	err := r.Rows.Next(dest)
	if err == nil {
		r.c.row(r.st)
	}
	return err
}
