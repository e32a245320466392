package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// lazyBeginConnector opens pgx connections whose transactions send their
// BEGIN with their first statement instead of on their own: pgx's
// database/sql driver waits for BEGIN's answer before the transaction's
// first statement is even sent, a round trip of ~170 µs on loopback that
// every transaction paid (docs/benchmarks.md, issue 14's ninth round).
// When the first statement is an Exec, BEGIN and it go in one pipelined
// batch; a query's first statement waits for BEGIN as before (its rows
// are read through pgx's own database/sql rows). A transaction that ends
// before any statement sends nothing at all.
type lazyBeginConnector struct{ base driver.Connector }

func (c lazyBeginConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		_ = conn.Close()
		return nil, fmt.Errorf("postgres: the pgx driver opened a %T, not a *stdlib.Conn", conn)
	}
	return &lazyBeginConn{Conn: sc}, nil
}

func (c lazyBeginConnector) Driver() driver.Driver { return c.base.Driver() }

// lazyBeginConn is a pgx connection whose transaction's BEGIN (begin) waits
// for the first statement. database/sql uses a connection from one
// goroutine at a time, and cancels a transaction through Rollback on the
// same connection, so it needs no lock.
type lazyBeginConn struct {
	*stdlib.Conn
	tx    *lazyTx // the open transaction, nil outside one
	begin string  // its BEGIN, until sent
}

// BeginTx opens a transaction without a round trip; its BEGIN goes with its
// first statement.
func (c *lazyBeginConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	if c.tx != nil {
		return nil, errors.New("postgres: a transaction is already open on this connection")
	}
	begin, err := beginSQL(opts)
	if err != nil {
		return nil, err
	}
	c.tx, c.begin = &lazyTx{c: c, ctx: ctx}, begin
	return c.tx, nil
}

// Begin is BeginTx with the default options.
func (c *lazyBeginConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// beginSQL is the BEGIN of a transaction of opts, as pgx's driver writes it.
func beginSQL(opts driver.TxOptions) (string, error) {
	var o pgx.TxOptions
	switch sql.IsolationLevel(opts.Isolation) {
	case sql.LevelDefault:
	case sql.LevelReadUncommitted:
		o.IsoLevel = pgx.ReadUncommitted
	case sql.LevelReadCommitted:
		o.IsoLevel = pgx.ReadCommitted
	case sql.LevelRepeatableRead, sql.LevelSnapshot:
		o.IsoLevel = pgx.RepeatableRead
	case sql.LevelSerializable:
		o.IsoLevel = pgx.Serializable
	default:
		return "", fmt.Errorf("postgres: unsupported isolation level %v", sql.IsolationLevel(opts.Isolation))
	}
	begin := "begin"
	if o.IsoLevel != "" {
		begin += " isolation level " + string(o.IsoLevel)
	}
	if opts.ReadOnly {
		begin += " read only"
	}
	return begin, nil
}

// ExecContext runs query; the transaction's BEGIN, when not sent yet, goes
// with it in one round trip.
func (c *lazyBeginConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if c.begin == "" {
		return c.Conn.ExecContext(ctx, query, args)
	}
	if c.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	b := &pgx.Batch{}
	b.Queue(c.begin)
	b.Queue(query, values(args)...)
	c.begin = ""
	br := c.Conn.Conn().SendBatch(ctx, b)
	_, berr := br.Exec() // a failed BEGIN fails query too: PostgreSQL skips it
	tag, qerr := br.Exec()
	cerr := br.Close()
	for _, err := range []error{berr, qerr, cerr} {
		if err != nil && pgconn.SafeToRetry(err) {
			return nil, driver.ErrBadConn
		} else if err != nil {
			return nil, err
		}
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

// QueryContext sends the transaction's BEGIN, when not sent yet, then runs
// query.
func (c *lazyBeginConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := c.sendBegin(ctx); err != nil {
		return nil, err
	}
	return c.Conn.QueryContext(ctx, query, args)
}

// PrepareContext prepares query; its statement sends the transaction's
// BEGIN first when it runs in one.
func (c *lazyBeginConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	s, err := c.Conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &lazyBeginStmt{Stmt: s.(*stdlib.Stmt), c: c}, nil
}

// Prepare is PrepareContext without a context.
func (c *lazyBeginConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// sendBegin sends the open transaction's BEGIN when it has not been.
func (c *lazyBeginConn) sendBegin(ctx context.Context) error {
	if c.begin == "" {
		return nil
	}
	begin := c.begin
	c.begin = ""
	if _, err := c.Conn.Conn().Exec(ctx, begin); err != nil {
		if pgconn.SafeToRetry(err) {
			return driver.ErrBadConn
		}
		return err
	}
	return nil
}

// end closes the open transaction with command (commit or rollback), which
// is not sent when nothing of the transaction was.
func (c *lazyBeginConn) end(ctx context.Context, command string) (pgconn.CommandTag, error) {
	c.tx = nil
	if c.begin != "" {
		c.begin = ""
		return pgconn.NewCommandTag(command), nil
	}
	tag, err := c.Conn.Conn().Exec(ctx, command)
	if err != nil && c.Conn.Conn().PgConn().TxStatus() != 'I' {
		_ = c.Conn.Conn().Close(ctx) // left in a transaction: not to be used again
	}
	return tag, err
}

// lazyTx is a lazyBeginConn's open transaction.
type lazyTx struct {
	c   *lazyBeginConn
	ctx context.Context // BeginTx's, as pgx's driver keeps it for Commit and Rollback
}

// Commit commits; a transaction PostgreSQL had aborted is rolled back and
// answered pgx.ErrTxCommitRollback, as pgx's driver answers it.
func (t *lazyTx) Commit() error {
	tag, err := t.c.end(t.ctx, "commit")
	if err == nil && tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return err
}

func (t *lazyTx) Rollback() error {
	_, err := t.c.end(t.ctx, "rollback")
	return err
}

// lazyBeginStmt is a prepared statement of a lazyBeginConn.
type lazyBeginStmt struct {
	*stdlib.Stmt
	c *lazyBeginConn
}

func (s *lazyBeginStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if err := s.c.sendBegin(ctx); err != nil {
		return nil, err
	}
	return s.Stmt.ExecContext(ctx, args)
}

func (s *lazyBeginStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if err := s.c.sendBegin(ctx); err != nil {
		return nil, err
	}
	return s.Stmt.QueryContext(ctx, args)
}

// values are a statement's arguments as pgx takes them.
func values(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}
