package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

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

func lazy(cfg pgx.ConnConfig) driver.Connector {
	return lazyBeginConnector{base: stdlib.GetConnector(cfg)}
}

// insertTwice runs a transaction of two inserts and returns the round
// trips it took.
func insertTwice(t *testing.T, db *sql.DB, writes *atomic.Int64, k int) int64 {
	t.Helper()
	before := writes.Load()
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []int{k, k + 1} {
		if _, err := tx.ExecContext(t.Context(), `INSERT INTO t (k) VALUES ($1)`, v); err != nil {
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
	db, writes := countedDB(t, lazy)
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
func TestALazyBeginKeepsTheTransaction(t *testing.T) {
	t.Parallel()
	db, writes := countedDB(t, lazy)
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
}
