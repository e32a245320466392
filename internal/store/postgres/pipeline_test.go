package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/testutil/pgtest"
)

// countedDB opens one connection to a fresh database through connector
// (made from the pgx configuration given), counting what it sends: pgx
// writes each batch of messages at once, so a write is a round trip.
func countedDB(t *testing.T, connector func(pgx.ConnConfig) driver.Connector) (*sql.DB, *atomic.Int64) {
	t.Helper()
	cfg, err := pgx.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	writes := &atomic.Int64{}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		return countingConn{Conn: c, writes: writes}, err
	}
	db := sql.OpenDB(connector(*cfg))
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	if _, err := db.ExecContext(t.Context(), `CREATE TABLE t (k INT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return db, writes
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

func pipelined(cfg pgx.ConnConfig) driver.Connector {
	return pipelineConnector{base: stdlib.GetConnector(cfg)}
}

// insertTwice runs a transaction of two inserts and returns the round
// trips it took; with deferFirst the first is sqlstore.Deferred.
func insertTwice(t *testing.T, db *sql.DB, writes *atomic.Int64, k int, deferFirst ...bool) int64 {
	t.Helper()
	before := writes.Load()
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range []int{k, k + 1} {
		ctx := t.Context()
		if i == 0 && len(deferFirst) > 0 && deferFirst[0] {
			ctx = sqlstore.Deferred(ctx)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO t (k) VALUES ($1)`, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return writes.Load() - before
}

// A transaction's BEGIN goes with its first statement: a transaction of
// two inserts takes three round trips where pgx's driver takes four, and
// one that ends before any statement sends nothing.
func TestBeginGoesWithTheFirstStatement(t *testing.T) {
	t.Parallel()
	plain, plainWrites := countedDB(t, func(cfg pgx.ConnConfig) driver.Connector { return stdlib.GetConnector(cfg) })
	db, writes := countedDB(t, pipelined)
	insertTwice(t, plain, plainWrites, 1) // the statements are prepared once per connection
	insertTwice(t, db, writes, 1)
	if got, was := insertTwice(t, db, writes, 10), insertTwice(t, plain, plainWrites, 10); got != 3 || was != 4 {
		t.Errorf("round trips of BEGIN, two inserts, COMMIT: %d (pgx's driver: %d); want 3 (4)", got, was)
	}
	before := writes.Load()
	for _, end := range []func(*sql.Tx) error{(*sql.Tx).Commit, (*sql.Tx).Rollback} {
		tx, err := db.BeginTx(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := end(tx); err != nil {
			t.Fatalf("end an empty transaction: %v", err)
		}
	}
	if n := writes.Load() - before; n != 0 {
		t.Errorf("two empty transactions took %d round trips, want 0", n)
	}
}

// Whatever its first statement, a transaction keeps its meaning: options
// hold from the first statement on, a rollback undoes it, a failed first
// statement leaves the transaction to roll back and the connection usable,
// and a commit after a failure rolls back and says so.
func TestAWaitingBeginKeepsTheTransaction(t *testing.T) {
	t.Parallel()
	db, writes := countedDB(t, pipelined)
	ctx := t.Context()
	count := func() int {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM t`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// Options, with a query first and with an insert first.
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var iso, ro string
	if err := tx.QueryRowContext(ctx, `SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')`).
		Scan(&iso, &ro); err != nil || iso != "serializable" || ro != "on" {
		t.Errorf("a serializable read-only transaction's first query sees %q, %q (%v)", iso, ro, err)
	}
	_ = tx.Rollback()
	tx, err = db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var pe *pgconn.PgError
	if _, err := tx.ExecContext(ctx, `INSERT INTO t (k) VALUES (1)`); !errors.As(err, &pe) || pe.Code != "25006" {
		t.Errorf("an insert first in a read-only transaction: %v; want read_only_sql_transaction (25006)", err)
	}
	_ = tx.Rollback()

	// A rollback undoes an insert sent with BEGIN, and one of a prepared
	// statement.
	stmt, err := db.PrepareContext(ctx, `INSERT INTO t (k) VALUES ($1)`)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	for _, insert := range []func(*sql.Tx) error{
		func(tx *sql.Tx) error { _, err := tx.ExecContext(ctx, `INSERT INTO t (k) VALUES (2)`); return err },
		func(tx *sql.Tx) error { _, err := tx.StmtContext(ctx, stmt).ExecContext(ctx, 3); return err },
	} {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := insert(tx); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(); n != 0 {
		t.Fatalf("%d rows after rolled-back inserts, want 0", n)
	}

	// A failed first statement: its error, a rollback, a usable connection.
	if _, err := db.ExecContext(ctx, `INSERT INTO t (k) VALUES (4)`); err != nil {
		t.Fatal(err)
	}
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO t (k) VALUES (4)`); !errors.As(err, &pe) || pe.Code != "23505" {
		t.Errorf("a duplicate first: %v; want unique_violation (23505)", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO t (k) VALUES (5)`); err == nil {
		t.Error("a statement after a failed one ran")
	}
	if err := tx.Commit(); !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Errorf("commit after a failure: %v; want pgx.ErrTxCommitRollback", err)
	}
	if n := count(); n != 1 {
		t.Errorf("%d rows after the failed transaction, want 1", n)
	}
	insertTwice(t, db, writes, 20)
	if n := count(); n != 3 {
		t.Errorf("the connection after a failed transaction: %d rows, want 3", n)
	}

	// A first statement that fails before BEGIN takes effect (it cannot be
	// prepared): the transaction's later statements fail, as in an aborted
	// one, and its commit rolls back.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO nosuch (k) VALUES ($1)`, 1); !errors.As(err, &pe) || pe.Code != "42P01" {
		t.Errorf("an insert into no table first: %v; want undefined_table (42P01)", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO t (k) VALUES ($1)`, 30); !errors.As(err, &pe) || pe.Code != "25P02" {
		t.Errorf("an insert after it: %v; want in_failed_sql_transaction (25P02)", err)
	}
	if err := tx.Commit(); !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Errorf("its commit: %v; want pgx.ErrTxCommitRollback", err)
	}
	if n := count(); n != 3 {
		t.Errorf("%d rows after a transaction whose BEGIN failed, want 3", n)
	}

	// A first statement without arguments keeps the simple protocol: one
	// text may hold several commands.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO t (k) VALUES (60); INSERT INTO t (k) VALUES (61)`); err != nil {
		t.Errorf("two commands in one text first: %v", err)
	}
	if err := tx.Commit(); err != nil || count() != 5 {
		t.Errorf("their commit: %v, %d rows; want 5", err, count())
	}
}

// A deferred statement of a transaction goes with the next one, or with the
// COMMIT: two inserts, the first deferred, then COMMIT take two round trips;
// a ROLLBACK drops it unsent. Its failure is the next statement's error,
// named as an earlier statement's and not mistaken for that statement's own
// (no PostgreSQL error type), and the transaction then rolls back. Outside a
// transaction, or without arguments, a deferred statement runs at once.
func TestDeferredStatementsWaitForTheNext(t *testing.T) {
	t.Parallel()
	db, writes := countedDB(t, pipelined)
	ctx := t.Context()
	count := func(q querier) int {
		var n int
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM t`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	insertTwice(t, db, writes, 1, true) // prepares the statements
	if n := insertTwice(t, db, writes, 10, true); n != 2 {
		t.Errorf("BEGIN, a deferred insert, an insert, COMMIT took %d round trips, want 2", n)
	}
	if n := count(db); n != 4 {
		t.Fatalf("%d rows, want 4", n)
	}

	before := writes.Load()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(sqlstore.Deferred(ctx), `INSERT INTO t (k) VALUES ($1)`, 20); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil || writes.Load() != before || count(db) != 4 {
		t.Errorf("a rolled-back deferred insert: %v, %d round trips, %d rows; want none sent and 4 rows", err, writes.Load()-before, count(db))
	}

	// A deferred insert is seen by the transaction's next query.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(sqlstore.Deferred(ctx), `INSERT INTO t (k) VALUES ($1)`, 30); err != nil {
		t.Fatal(err)
	}
	if n := count(tx); n != 5 {
		t.Errorf("the transaction's query after a deferred insert counts %d rows, want 5", n)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	// A deferred duplicate fails the next statement, then the commit.
	for _, next := range []string{"insert", "commit"} {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(sqlstore.Deferred(ctx), `INSERT INTO t (k) VALUES ($1)`, 1); err != nil {
			t.Fatal(err)
		}
		if next == "insert" {
			_, err = tx.ExecContext(ctx, `INSERT INTO t (k) VALUES (40)`)
			_ = tx.Rollback()
		} else {
			err = tx.Commit()
		}
		var pe *pgconn.PgError
		if err == nil || errors.As(err, &pe) || !strings.Contains(err.Error(), "an earlier statement of the transaction (INSERT INTO t (k) VALUES ($1)) failed") ||
			!strings.Contains(err.Error(), "23505") {
			t.Errorf("%s after a deferred duplicate: %v; want the duplicate named as an earlier statement's, without its type", next, err)
		}
		if n := count(db); n != 5 {
			t.Errorf("%d rows after the failed transaction (%s), want 5", n, next)
		}
	}

	if _, err := db.ExecContext(sqlstore.Deferred(ctx), `INSERT INTO t (k) VALUES ($1)`, 50); err != nil || count(db) != 6 {
		t.Errorf("a deferred insert outside a transaction: %v, %d rows; want it run at once (6 rows)", err, count(db))
	}
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(sqlstore.Deferred(ctx), `INSERT INTO t (k) VALUES (51)`); err != nil || count(tx) != 7 {
		t.Errorf("a deferred insert without arguments: %v, the transaction counts %d rows; want it run at once (7)", err, count(tx))
	}
	_ = tx.Rollback()
}

// querier is what *sql.DB and *sql.Tx share for a count.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// The queueing lock is tried as a deferred Exec whose row count says
// whether it was taken (Dialect.TryQueueLockSQL, sqlstore.DeferredCounted),
// so that it waits, with what waits, for the transaction's next query:
// BEGIN, a deferred update (a try end's Unread scheduling), the lock and
// the query (the queueing reads) take one round trip, and the count is
// known once the query returns. A second transaction is refused the lock
// while the first holds it, and the first's deferred update is in place
// once it commits.
func TestTheTriedLockCarriesWhatWaits(t *testing.T) {
	t.Parallel()
	db, writes := countedDB(t, pipelined)
	ctx := t.Context()
	insertTwice(t, db, writes, 1, true) // prepares the insert
	db.SetMaxOpenConns(2)
	tryLock := func(tx *sql.Tx) int64 {
		t.Helper()
		n := int64(-1)
		if _, err := tx.ExecContext(sqlstore.DeferredCounted(ctx, &n), Dialect().TryQueueLockSQL, 42); err != nil {
			t.Fatal(err)
		}
		if n != -1 {
			t.Errorf("the lock's count is %d before any statement carried it", n)
		}
		var rows int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM t WHERE k >= $1`, 0).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		return n
	}
	tx, err := db.BeginTx(ctx, nil) // prepares the lock's statement
	if err != nil {
		t.Fatal(err)
	}
	tryLock(tx)
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	before := writes.Load()
	if tx, err = db.BeginTx(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(sqlstore.Deferred(ctx), `INSERT INTO t (k) VALUES ($1)`, 10); err != nil {
		t.Fatal(err)
	}
	if n := tryLock(tx); n != 1 {
		t.Errorf("the free lock: %d rows, want 1 (taken)", n)
	}
	if n := writes.Load() - before; n != 1 {
		t.Errorf("BEGIN, a deferred insert and the lock took %d round trips, want 1", n)
	}
	other, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := tryLock(other); n != 0 {
		t.Errorf("the held lock: %d rows, want 0 (refused)", n)
	}
	if err := other.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var k int
	if err := db.QueryRowContext(ctx, `SELECT k FROM t WHERE k = 10`).Scan(&k); err != nil {
		t.Errorf("the deferred insert after commit: %v", err)
	}
}

// A query with arguments carries what waits: BEGIN, a deferred insert and
// the query take one round trip, the query sees the insert, and its
// columns come out as pgx's driver gives them (the same query run alone
// scans the same). A deferred statement's failure is the query's error,
// naming it, and the transaction then commits nothing.
func TestAQueryCarriesWhatWaits(t *testing.T) {
	t.Parallel()
	db, writes := countedDB(t, pipelined)
	ctx := t.Context()
	const typed = `SELECT COUNT(*) FILTER (WHERE k >= $1), $2::uuid, 1.5::float8, 2.5::float4, 7::int2, 8::int4,
		'2026-12-03 10:00:00+00'::timestamptz, '2026-12-03 10:00:00'::timestamp, '2026-12-03'::date, TRUE,
		'{"a": [1]}'::jsonb, '{"b": 2}'::json, '\x0102'::bytea, 'text', NULL::int8, 3.25::numeric,
		'1 day 02:03:04'::interval, ARRAY[1, 2]::int8[], ARRAY['a', 'b c']::text[] FROM t`
	const id = "8b0d3c4e-2f1a-4c5b-9d6e-7f8091a2b3c4"
	scan := func(q interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}) []any {
		t.Helper()
		rows, err := q.QueryContext(ctx, typed, 100, id)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = rows.Close() }()
		if !rows.Next() {
			t.Fatalf("no row: %v", rows.Err())
		}
		vals := make([]any, 19)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		if rows.Next() {
			t.Fatal("a second row")
		}
		return vals
	}
	insertTwice(t, db, writes, 1, true) // prepares the insert
	want := scan(db)                    // pgx's driver: nothing waits
	want[0] = int64(1)                  // the deferred insert below is counted
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(sqlstore.Deferred(ctx), `INSERT INTO t (k) VALUES ($1)`, 100); err != nil {
		t.Fatal(err)
	}
	before := writes.Load()
	got := scan(tx)
	if n := writes.Load() - before; n != 1 {
		t.Errorf("BEGIN, a deferred insert and the query took %d round trips, want 1", n)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("columns with what waited:\n got %#v\nwant %#v", got, want)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(sqlstore.Deferred(ctx), `INSERT INTO t (k) VALUES ($1)`, 200); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(sqlstore.Deferred(ctx), `INSERT INTO t (k) VALUES ($1)`, 1); err != nil { // a duplicate
		t.Fatal(err)
	}
	_, err = tx.QueryContext(ctx, `SELECT k FROM t WHERE k > $1`, 0)
	if err == nil || !strings.Contains(err.Error(), "an earlier statement of the transaction (INSERT INTO t (k) VALUES ($1)) failed") {
		t.Errorf("a query after a deferred duplicate: %v; want the duplicate named", err)
	}
	if err := tx.Commit(); err == nil {
		t.Error("the transaction of a failed deferred insert committed")
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM t WHERE k = $1`, 200).Scan(&n); err != nil || n != 0 {
		t.Errorf("the failed transaction's other insert: %d rows (%v), want 0", n, err)
	}
}

// A query marked Ahead waits for the transaction's next statement: BEGIN,
// the query, a deferred insert and a second query take one round trip; the
// first query's rows, read after the second's, are what it saw (before the
// insert) and come out as pgx's driver gives them. Read before anything
// else is sent, it goes alone. A rollback drops it unsent; outside a
// transaction it runs at once.
func TestAnAheadQueryGoesWithTheNext(t *testing.T) {
	t.Parallel()
	db, writes := countedDB(t, pipelined)
	ctx := t.Context()
	insertTwice(t, db, writes, 1) // rows 1, 2; prepares the insert
	const typed = `SELECT k, $1::uuid, '{"a": 1}'::jsonb, 3.25::numeric, NULL::int8, now() FROM t WHERE k >= $2 ORDER BY k`
	const id = "8b0d3c4e-2f1a-4c5b-9d6e-7f8091a2b3c4"
	all := func(rows *sql.Rows, err error) [][]any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = rows.Close() }()
		var out [][]any
		for rows.Next() {
			vals := make([]any, 6)
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			vals[5] = nil // now(): the transaction's start, not comparable across them
			out = append(out, vals)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := all(db.QueryContext(ctx, typed, id, 0)) // pgx's driver, nothing waiting; prepares the query
	if len(want) != 2 {
		t.Fatalf("%d rows, want 2", len(want))
	}
	const counted = `SELECT COUNT(*) FROM t WHERE k >= $1`
	var count int
	if err := db.QueryRowContext(ctx, counted, 0).Scan(&count); err != nil { // prepares it
		t.Fatal(err)
	}

	before := writes.Load()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ahead, err := tx.QueryContext(sqlstore.Ahead(ctx), typed, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(sqlstore.Deferred(ctx), `INSERT INTO t (k) VALUES ($1)`, 10); err != nil {
		t.Fatal(err)
	}
	if n := writes.Load() - before; n != 0 {
		t.Errorf("BEGIN, an ahead query and a deferred insert sent %d times, want nothing yet", n)
	}
	if err := tx.QueryRowContext(ctx, counted, 0).Scan(&count); err != nil || count != 3 {
		t.Errorf("the query after them: %d rows (%v), want 3", count, err)
	}
	if n := writes.Load() - before; n != 1 {
		t.Errorf("BEGIN, an ahead query, a deferred insert and a query took %d round trips, want 1", n)
	}
	if got := all(ahead, nil); !reflect.DeepEqual(got, want) {
		t.Errorf("the ahead query's rows, read after the next query's:\n got %#v\nwant %#v (what it saw before the insert)", got, want)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := writes.Load() - before; n != 2 {
		t.Errorf("with the commit: %d round trips, want 2", n)
	}

	// Read first, it goes alone (with BEGIN); it sees the committed insert.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	before = writes.Load()
	if got := all(tx.QueryContext(sqlstore.Ahead(ctx), typed, id, 0)); len(got) != 3 || writes.Load()-before != 1 {
		t.Errorf("an ahead query read at once: %d rows in %d round trips, want 3 in 1", len(got), writes.Load()-before)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	// A rollback drops it unsent, and so does a commit when it was closed
	// unread (a failing query: the commit would fail with it).
	for _, commit := range []bool{false, true} {
		tx, err = db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		before = writes.Load()
		dropped, err := tx.QueryContext(sqlstore.Ahead(ctx), `SELECT k / (k - $1) FROM t`, 1)
		if err != nil {
			t.Fatal(err)
		}
		end := tx.Rollback
		if commit {
			_ = dropped.Close()
			end = tx.Commit
		}
		if err := end(); err != nil {
			t.Errorf("commit %v: %v", commit, err)
		}
		if dropped.Next() || writes.Load() != before {
			t.Errorf("commit %v: an unread ahead query %v, %d round trips; want no rows, nothing sent",
				commit, dropped.Err(), writes.Load()-before)
		}
	}

	// Outside a transaction it runs at once.
	before = writes.Load()
	rows, err := db.QueryContext(sqlstore.Ahead(ctx), typed, id, 0)
	if n := writes.Load() - before; err != nil || n != 1 {
		t.Errorf("an ahead query outside a transaction: %v, %d round trips; want it sent at once", err, n)
	}
	if got := all(rows, err); len(got) != 3 {
		t.Errorf("an ahead query outside a transaction: %d rows, want 3", len(got))
	}
}

// An ahead query's failure is its own rows' error, and the error of the
// statement that carried it, naming it; the transaction commits nothing.
// A deferred statement's failure before it is its rows' error too.
func TestAFailedAheadQuery(t *testing.T) {
	t.Parallel()
	db, writes := countedDB(t, pipelined)
	ctx := t.Context()
	insertTwice(t, db, writes, 1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(sqlstore.Deferred(ctx), `INSERT INTO t (k) VALUES ($1)`, 20); err != nil {
		t.Fatal(err)
	}
	ahead, err := tx.QueryContext(sqlstore.Ahead(ctx), `SELECT k / (k - $1) FROM t`, 1) // division by zero
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO t (k) VALUES ($1)`, 21)
	if err == nil || !strings.Contains(err.Error(), "an earlier statement of the transaction (SELECT k / (k - $1) FROM t) failed") {
		t.Errorf("the statement that carried a failing ahead query: %v; want the query named", err)
	}
	var pe *pgconn.PgError
	if ahead.Next() || !errors.As(ahead.Err(), &pe) || pe.Code != "22012" {
		t.Errorf("the failed ahead query's rows: %v; want division_by_zero", ahead.Err())
	}
	if err := tx.Commit(); err == nil {
		t.Error("the transaction of a failed ahead query committed")
	}

	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(sqlstore.Deferred(ctx), `INSERT INTO t (k) VALUES ($1)`, 1); err != nil { // a duplicate
		t.Fatal(err)
	}
	after, err := tx.QueryContext(sqlstore.Ahead(ctx), `SELECT k FROM t WHERE k > $1`, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Its error names the insert, and is not a conflict of its own (the
	// store would classify a raw unique violation as the read's).
	if after.Next() || after.Err() == nil || errors.As(after.Err(), new(*pgconn.PgError)) ||
		!strings.Contains(after.Err().Error(), "an earlier statement of the transaction (INSERT INTO t (k) VALUES ($1)) failed") {
		t.Errorf("an ahead query after a failed deferred insert: %v; want the insert's failure, named, without its type", after.Err())
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM t`).Scan(&n); err != nil || n != 2 {
		t.Errorf("after the failed transactions: %d rows (%v), want 2", n, err)
	}
}

// Reading an ahead query whose context has ended sends nothing and fails
// with the context's error; what waited with it still waits, and goes with
// the transaction's next statement.
func TestAnAheadQueryReadAfterItsContextEnded(t *testing.T) {
	t.Parallel()
	db, writes := countedDB(t, pipelined)
	ctx := t.Context()
	insertTwice(t, db, writes, 1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO t (k) VALUES ($1)`, 10); err != nil { // BEGIN is sent
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(sqlstore.Deferred(ctx), `INSERT INTO t (k) VALUES ($1)`, 11); err != nil {
		t.Fatal(err)
	}
	qctx, cancel := context.WithCancel(ctx)
	rows, err := tx.QueryContext(sqlstore.Ahead(qctx), `SELECT k FROM t WHERE k > $1`, 0)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	before := writes.Load()
	if rows.Next() {
		t.Error("a row from an ahead query whose context ended")
	}
	if writes.Load() != before {
		t.Errorf("reading it sent %d times, want nothing", writes.Load()-before)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO t (k) VALUES ($1)`, 12); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM t WHERE k IN (10, 11, 12)`).Scan(&n); err != nil || n != 3 {
		t.Errorf("after the commit: %d of the transaction's 3 rows (%v); the deferred insert was lost", n, err)
	}
}
