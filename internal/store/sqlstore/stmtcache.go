package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// stmtCache holds prepared statements of the hottest queries (task state
// from running tries), one per pool and SQL text. Without it every call
// parses and plans its SQL again: with modernc SQLite that was about a
// quarter of the api-server's CPU under many concurrent task-state calls.
// database/sql prepares a statement on each connection of the pool the
// first time it runs there.
type stmtCache struct {
	m sync.Map // stmtKey → *sql.Stmt
}

type stmtKey struct {
	db    *sql.DB
	query string
}

// prep returns the pool's prepared statement for query, preparing it the
// first time. Call it outside a transaction only (see cached); a
// transaction runs a statement prepared before it through tx.StmtContext,
// which reuses the connection's compiled statement (modernc SQLite keeps
// it between executions).
func (c *stmtCache) prep(ctx context.Context, db *sql.DB, query string) (*sql.Stmt, error) {
	k := stmtKey{db, query}
	if st, ok := c.m.Load(k); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := c.m.LoadOrStore(k, st); loaded {
		_ = st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// cached returns the pool's prepared statement for query when one was
// prepared already, else nil. Inside a transaction this is the only safe
// look-up: preparing would wait for a pool connection, and on SQLite the
// transaction holds the writer's only one.
func (c *stmtCache) cached(db *sql.DB, query string) *sql.Stmt {
	if st, ok := c.m.Load(stmtKey{db, query}); ok {
		return st.(*sql.Stmt)
	}
	return nil
}

// warm prepares queries on the writer pool outside a transaction, so that
// hot writes inside the transactions that follow reuse them (hotWrite).
// A query that fails to prepare is left to run unprepared.
func (s *Store) warm(ctx context.Context, queries ...string) {
	if s.tx != nil || s.stmts == nil {
		return
	}
	for _, q := range queries {
		_, _ = s.stmts.prep(ctx, s.w, q)
	}
}

// close closes every cached statement.
func (c *stmtCache) close() error {
	var errs []error
	c.m.Range(func(k, v any) bool {
		errs = append(errs, v.(*sql.Stmt).Close())
		c.m.Delete(k)
		return true
	})
	return errors.Join(errs...)
}

// hotQuerier runs one hot query: a cached prepared statement on the pool
// outside a transaction, the transaction itself inside one.
type hotQuerier struct {
	s     *Store
	db    *sql.DB
	query string
}

// hotRead and hotWrite return where a hot query runs (reader and writer
// pools, as reader() and writer()).
func (s *Store) hotRead(query string) hotQuerier  { return hotQuerier{s, s.r, query} }
func (s *Store) hotWrite(query string) hotQuerier { return hotQuerier{s, s.w, query} }

// inTx returns the transaction's copy of the cached statement (the
// compiled statement of the connection is reused, not parsed again), or nil
// outside a transaction or when none was prepared (warm).
func (h hotQuerier) inTx(ctx context.Context) *sql.Stmt {
	if h.s.tx == nil || h.s.stmts == nil {
		return nil
	}
	if st := h.s.stmts.cached(h.s.w, h.query); st != nil {
		return h.s.tx.StmtContext(ctx, st)
	}
	return nil
}

func (h hotQuerier) exec(ctx context.Context, args ...any) (sql.Result, error) {
	if st := h.inTx(ctx); st != nil {
		return st.ExecContext(ctx, args...)
	}
	if h.s.tx != nil || h.s.stmts == nil {
		return h.s.writer().ExecContext(ctx, h.query, args...)
	}
	st, err := h.s.stmts.prep(ctx, h.db, h.query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// queryRow runs the query; the error of preparing it surfaces from Scan.
func (h hotQuerier) queryRow(ctx context.Context, args ...any) scanner {
	if st := h.inTx(ctx); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	if h.s.tx != nil || h.s.stmts == nil {
		return h.s.reader().QueryRowContext(ctx, h.query, args...)
	}
	st, err := h.s.stmts.prep(ctx, h.db, h.query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

// errRow is a row whose Scan fails with err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
