package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/weirflow/weir/internal/store/sqlstore"
)

// pipelineConnector opens pgx connections whose transactions send what
// need not wait with the next statement that must: pgx's database/sql
// driver sends every statement on its own and waits for its answer, a
// round trip of ~170 µs on loopback (docs/performance-history.md, issue 14's ninth
// round). Two things wait:
//
//   - a transaction's BEGIN, for its first statement: a transaction that
//     ends before any statement sends nothing at all;
//   - in a transaction, a statement the store marks sqlstore.Deferred (its
//     result is not read), for the transaction's next statement or its
//     COMMIT; a ROLLBACK drops it unsent.
//
// What waits goes with the next Exec, query or COMMIT as one pipelined
// batch, one round trip (a query's rows are then read from the batch,
// batchRows); a statement without arguments (which keeps pgx's simple
// protocol, where one text may hold several commands), and a prepared
// statement's, send it first as a batch of its own. The first failure of a
// batch is its error: PostgreSQL skips the rest of it, and the transaction
// is then to be rolled back.
type pipelineConnector struct{ base driver.Connector }

func (c pipelineConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		_ = conn.Close()
		return nil, fmt.Errorf("postgres: the pgx driver opened a %T, not a *stdlib.Conn", conn)
	}
	return &pipelineConn{Conn: sc}, nil
}

func (c pipelineConnector) Driver() driver.Driver { return c.base.Driver() }

// pipelineConn is a pgx connection and what waits to be sent with its next
// statement. database/sql uses a connection from one goroutine at a time,
// and cancels a transaction through Rollback on the same connection, so it
// needs no lock.
type pipelineConn struct {
	*stdlib.Conn
	tx      *pipelineTx // the open transaction, nil outside one
	begin   string      // its BEGIN, until sent
	waiting []waitingExec
	// aborted is set when a batch that carried the transaction's BEGIN
	// failed before BEGIN took effect (a statement that could not be
	// prepared or encoded): the server is in no transaction, so the
	// transaction's later statements fail here, as PostgreSQL fails them
	// in an aborted one, and its commit rolls back.
	aborted bool
}

// errAborted is what a statement of an aborted transaction gets, as
// PostgreSQL words it.
var errAborted = &pgconn.PgError{Severity: "ERROR", Code: "25P02",
	Message: "current transaction is aborted, commands ignored until end of transaction block"}

// waitingExec is a deferred statement not sent yet.
type waitingExec struct {
	query string
	args  []any
	count *int64     // where its row count goes once it ran (sqlstore.DeferredCounted), or nil
	ahead *aheadRows // where its rows go, for a query (sqlstore.Ahead), or nil
}

// BeginTx opens a transaction without a round trip.
func (c *pipelineConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
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
	c.tx, c.begin = &pipelineTx{c: c, ctx: ctx}, begin
	return c.tx, nil
}

// Begin is BeginTx with the default options.
func (c *pipelineConn) Begin() (driver.Tx, error) {
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

// ExecContext runs query with what waits, in one round trip; a deferred
// statement in a transaction waits itself.
func (c *pipelineConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	switch {
	case c.aborted:
		return nil, errAborted
	case c.tx != nil && len(args) > 0 && sqlstore.IsDeferred(ctx):
		c.waiting = append(c.waiting, waitingExec{query: query, args: values(args), count: sqlstore.DeferredCount(ctx)})
		return deferredResult{}, nil
	case !c.carries(args):
		if _, err := c.send(ctx, nil); err != nil {
			return nil, err
		}
		return c.Conn.ExecContext(ctx, query, args)
	}
	tag, err := c.send(ctx, &waitingExec{query: query, args: values(args)})
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

// QueryContext runs query with what waits, in one round trip; a query
// marked Ahead in a transaction waits itself.
func (c *pipelineConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if c.aborted {
		return nil, errAborted
	}
	if c.tx != nil && len(args) > 0 && sqlstore.IsAhead(ctx) {
		r := &aheadRows{c: c, ctx: ctx}
		c.waiting = append(c.waiting, waitingExec{query: query, args: values(args), ahead: r})
		return r, nil
	}
	if !c.carries(args) {
		if err := c.flush(ctx); err != nil {
			return nil, err
		}
		return c.Conn.QueryContext(ctx, query, args)
	}
	return c.sendQuery(ctx, waitingExec{query: query, args: values(args)})
}

// carries reports whether a statement of args goes in one batch with what
// waits: there is something waiting, and the statement has arguments (one
// without keeps pgx's simple protocol).
func (c *pipelineConn) carries(args []driver.NamedValue) bool {
	return len(args) > 0 && (c.begin != "" || len(c.waiting) > 0)
}

// flush sends what waits, before a statement that cannot go with it; in an
// aborted transaction it fails as the statement would.
func (c *pipelineConn) flush(ctx context.Context) error {
	if c.aborted {
		return errAborted
	}
	_, err := c.send(ctx, nil)
	return err
}

// PrepareContext prepares query; its statement sends what waits first.
func (c *pipelineConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	s, err := c.Conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &pipelineStmt{Stmt: s.(*stdlib.Stmt), c: c}, nil
}

// Prepare is PrepareContext without a context.
func (c *pipelineConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// send sends, in one batch, the transaction's BEGIN and deferred statements
// that wait, then last (when not nil), and returns last's command tag.
func (c *pipelineConn) send(ctx context.Context, last *waitingExec) (pgconn.CommandTag, error) {
	if c.begin == "" && len(c.waiting) == 0 {
		if last == nil {
			return pgconn.CommandTag{}, nil
		}
		tag, err := c.Conn.Conn().Exec(ctx, last.query, last.args...)
		return tag, badConn(err)
	}
	if c.Conn.Conn().IsClosed() {
		return pgconn.CommandTag{}, driver.ErrBadConn
	}
	if err := ctx.Err(); err != nil { // nothing is sent: what waits still does
		return pgconn.CommandTag{}, err
	}
	sent := c.sendWaiting(ctx, last)
	first := sent.readWaiting()
	var tag pgconn.CommandTag
	if last != nil {
		t, err := sent.br.Exec()
		if first == nil {
			first = err
		}
		tag = t
	}
	return tag, c.closeBatch(sent, first)
}

// sentBatch is a batch sent: the transaction's BEGIN (began) and the
// deferred statements that waited, then the statement that took them.
type sentBatch struct {
	br       pgx.BatchResults
	began    bool
	deferred []waitingExec
}

// sendWaiting sends what waits and then last (when not nil) as one batch.
func (c *pipelineConn) sendWaiting(ctx context.Context, last *waitingExec) sentBatch {
	b := &pgx.Batch{}
	if c.begin != "" {
		b.Queue(c.begin)
	}
	sent := sentBatch{began: c.begin != "", deferred: c.waiting}
	for _, w := range sent.deferred {
		b.Queue(w.query, w.args...)
	}
	if last != nil {
		b.Queue(last.query, last.args...)
	}
	c.begin, c.waiting = "", nil
	sent.br = c.Conn.Conn().SendBatch(ctx, b)
	return sent
}

// readWaiting reads the results of what waited and returns the first
// failure, a deferred statement's naming it (deferredFailure).
func (sent sentBatch) readWaiting() error {
	var first error
	if sent.began {
		_, first = sent.br.Exec()
	}
	for _, w := range sent.deferred {
		if w.ahead != nil {
			if first != nil { // skipped by the server: the earlier failure is its error too
				w.ahead.failed(first)
			} else if err := w.ahead.fill(sent.br); err != nil {
				first = deferredFailure(w.query, err)
			}
			continue
		}
		tag, err := sent.br.Exec()
		if first == nil && err != nil {
			first = deferredFailure(w.query, err)
		}
		if err == nil && w.count != nil {
			*w.count = tag.RowsAffected()
		}
	}
	return first
}

// closeBatch closes a sent batch whose first failure was first, and
// returns the batch's error.
func (c *pipelineConn) closeBatch(sent sentBatch, first error) error {
	if err := sent.br.Close(); first == nil {
		first = err
	}
	if first != nil && sent.began && c.Conn.Conn().PgConn().TxStatus() == 'I' {
		c.aborted = true // BEGIN did not take effect
	}
	return badConn(first)
}

// sendQuery sends what waits and then the query q as one batch, and
// returns q's rows.
func (c *pipelineConn) sendQuery(ctx context.Context, q waitingExec) (driver.Rows, error) {
	if c.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	if err := ctx.Err(); err != nil { // nothing is sent: what waits still does
		return nil, err
	}
	sent := c.sendWaiting(ctx, &q)
	if err := sent.readWaiting(); err != nil {
		return nil, c.closeBatch(sent, err)
	}
	rows, err := sent.br.Query()
	if err != nil {
		return nil, c.closeBatch(sent, err)
	}
	// As pgx's driver does: the first row is read now, so that the
	// columns are known and the query's own failure is its error.
	more := rows.Next()
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, c.closeBatch(sent, err)
	}
	return &batchRows{rows: rows, close: func() error { return c.closeBatch(sent, nil) },
		types: c.Conn.Conn().TypeMap(), more: more}, nil
}

// badConn is err, or driver.ErrBadConn when nothing was sent (database/sql
// then tries another connection where it can).
func badConn(err error) error {
	if err != nil && pgconn.SafeToRetry(err) {
		return driver.ErrBadConn
	}
	return err
}

// end closes the open transaction with command (commit or rollback). What
// waits goes with a commit and is dropped by a rollback; nothing is sent
// for a transaction of which nothing was.
func (c *pipelineConn) end(ctx context.Context, command string) (pgconn.CommandTag, error) {
	c.tx = nil
	if c.aborted { // the server is in no transaction: nothing to end
		c.dropWaiting()
		c.aborted, c.begin = false, ""
		return pgconn.NewCommandTag("ROLLBACK"), nil
	}
	if command == "rollback" {
		c.dropWaiting()
	}
	if c.begin != "" && len(c.waiting) == 0 {
		c.begin = ""
		return pgconn.NewCommandTag(command), nil
	}
	tag, err := c.send(ctx, &waitingExec{query: command})
	c.aborted = false // the transaction is over either way
	if err != nil && c.Conn.Conn().PgConn().TxStatus() != 'I' {
		// Still in the transaction: a deferred statement failed, so
		// PostgreSQL skipped the commit. Roll it back, or else the
		// connection is in doubt and not to be used again.
		if _, rerr := c.Conn.Conn().Exec(ctx, "rollback"); rerr != nil {
			_ = c.Conn.Conn().Close(ctx)
		}
	}
	return tag, err
}

// dropWaiting forgets what waits unsent.
func (c *pipelineConn) dropWaiting() {
	for _, w := range c.waiting {
		if w.ahead != nil {
			w.ahead.drop()
		}
	}
	c.waiting = nil
}

// pipelineTx is a pipelineConn's open transaction.
type pipelineTx struct {
	c   *pipelineConn
	ctx context.Context // BeginTx's, as pgx's driver keeps it for Commit and Rollback
}

// Commit commits; a transaction PostgreSQL had aborted is rolled back and
// answered pgx.ErrTxCommitRollback, as pgx's driver answers it.
func (t *pipelineTx) Commit() error {
	tag, err := t.c.end(t.ctx, "commit")
	if err == nil && tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return err
}

func (t *pipelineTx) Rollback() error {
	_, err := t.c.end(t.ctx, "rollback")
	return err
}

// pipelineStmt is a prepared statement of a pipelineConn.
type pipelineStmt struct {
	*stdlib.Stmt
	c *pipelineConn
}

func (s *pipelineStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if err := s.c.flush(ctx); err != nil {
		return nil, err
	}
	return s.Stmt.ExecContext(ctx, args)
}

func (s *pipelineStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if err := s.c.flush(ctx); err != nil {
		return nil, err
	}
	return s.Stmt.QueryContext(ctx, args)
}

// deferredResult is a deferred statement's result, not known when it is
// returned.
type deferredResult struct{}

var errDeferredResult = errors.New("postgres: a deferred statement's result is not known (sqlstore.Deferred)")

func (deferredResult) LastInsertId() (int64, error) { return 0, errDeferredResult }
func (deferredResult) RowsAffected() (int64, error) { return 0, errDeferredResult }

// deferredFailure is err, a deferred statement's failure, as the statement
// it went with returns it, naming the deferred statement. A data or
// constraint error (classes 22 and 23) keeps its text but not its type, so
// that it is not taken for that statement's own (the store maps those to
// sentinels: a conflict, a missing row, a bad value); others (the
// connection, the server shutting down, a deadlock) are the batch's, and
// keep their type.
func deferredFailure(query string, err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err
	}
	q, _, _ := strings.Cut(strings.TrimSpace(query), "\n")
	if strings.HasPrefix(pe.Code, "22") || strings.HasPrefix(pe.Code, "23") {
		return fmt.Errorf("an earlier statement of the transaction (%s) failed: %v", q, err) //nolint:errorlint // see above
	}
	return fmt.Errorf("an earlier statement of the transaction (%s) failed: %w", q, err)
}

// values are a statement's arguments as pgx takes them.
func values(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}
