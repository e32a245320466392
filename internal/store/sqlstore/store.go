// Package sqlstore is Weir's one implementation of store.Store over
// database/sql, shared by the SQLite and PostgreSQL adapters. The engines'
// real differences (row locking in claims, cross-process notification,
// constraint error codes, migrations) are described by a Dialect; every SQL
// text lives in queries.go and uses $N placeholders, which both drivers bind.
//
// Timestamps are stored as BIGINT microseconds since the Unix epoch (UTC) and
// JSON values as TEXT on both engines.
package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/groupcommit"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/store"
)

// Dialect describes what differs between engines.
type Dialect struct {
	// Name is the engine name returned by Store.Dialect: "sqlite" or "postgres".
	Name string
	// ClaimLock is appended to the claim's inner SELECT, e.g.
	// "FOR UPDATE SKIP LOCKED" on PostgreSQL; "" on SQLite, whose single
	// writer already serializes claims.
	ClaimLock string
	// RowLock is appended to a SELECT whose rows a transaction's later
	// writes depend on: "FOR UPDATE" on PostgreSQL (another transaction's
	// change of them waits, and is seen after); "" on SQLite.
	RowLock string
	// NotifySQL is run (with $1 = payload) to tell other processes about a
	// notification, after the change it tells of is committed (notifier.go);
	// "" when notifications stay in this process.
	NotifySQL string
	// QueueLockSQL takes a transaction-scoped lock that serializes the
	// queueing of task instances across schedulers and try ends
	// (PostgreSQL: an advisory lock); TryQueueLockSQL takes it only if it
	// is free, as a statement whose one row (none) says it did (did not):
	// run as an Exec, it goes with what the transaction sends later
	// (Deferred). "" on SQLite, where a write transaction already excludes
	// every other writer.
	QueueLockSQL, TryQueueLockSQL string
	// BlobType names the byte-string type in a CAST: BYTEA (PostgreSQL),
	// BLOB (SQLite).
	BlobType string
	// AnonymousParams writes the placeholders of generated multi-row
	// statements (task-instance inserts) as "?" bound in order rather than
	// "$N". SQLite resolves each "$N" name by a linear search of the names
	// before it, which makes a 9,000-parameter INSERT quadratic (15 % of a
	// 1,000-task trigger's CPU); "?" is not looked up at all.
	AnonymousParams bool
	// GroupInserts inserts a group commit's asset events by multi-row
	// INSERTs (eventbatch.go): on PostgreSQL each statement is a round trip
	// the whole group waits for. SQLite runs statements in-process, and a
	// multi-row INSERT that may abort costs it a statement journal (a copy
	// of each page it changes), more than the single-row INSERTs it saves.
	GroupInserts bool
	// ClaimJoinsRuns reads the runs of the tries a claim takes in the
	// claim's statement (an UPDATE in a CTE, joined to dag_run:
	// PostgreSQL, where a statement more is a round trip); SQLite, whose
	// RETURNING reads only the table it changes, reads them after.
	ClaimJoinsRuns bool
	// QueriesAhead: a query marked Ahead in a transaction waits for the
	// transaction's next statement (PostgreSQL's pipelined connections);
	// without it the query runs at once and its rows are read at once.
	QueriesAhead bool
	// Classify maps a driver error to core.ErrConflict (unique violation),
	// core.ErrNotFound (missing referenced row), core.ErrInvalid (malformed
	// value), or nil when the error is none of these.
	Classify func(err error) error
}

// Config assembles a Store.
type Config struct {
	Dialect Dialect
	// Write runs every write and transaction. On SQLite it has exactly one
	// connection.
	Write *sql.DB
	// Read runs reads outside transactions; nil means Write.
	Read *sql.DB
	// Migrations, when set, enables Migrate, MigrationStatus and Reset.
	Migrations *Migrations
	// OnClose runs before the pools are closed (e.g. stop a listener).
	OnClose func()
	// Secrets encrypts connection URIs at rest (connections.go); without
	// it connections cannot be saved, and only rows stored in plain text
	// before encryption existed can be read.
	Secrets *secrets.Box
	// Logger receives failures to tell other processes of a notification
	// (default: discarded).
	Logger *slog.Logger
}

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Store implements store.Store. A Store returned by New is safe for
// concurrent use; the Store handed to a WithTx callback is bound to that
// transaction and must not be used after the callback returns.
type Store struct {
	d      Dialect
	w, r   *sql.DB
	hub    *hub
	origin string // identifies this process's notifications
	mig    *Migrations
	// migrated is the schema version Migrate found and the one it left
	// (zeros: it applied none).
	migrated [2]int64
	close    func()
	once     sync.Once
	box      *secrets.Box
	events   *groupcommit.Group[*eventRequest] // concurrent asset-event inserts, one commit a group
	obs      *observers                        // what the process hears of commits (observe.go)
	// notifier tells other processes of notifications (nil without
	// Dialect.NotifySQL).
	notifier *notifier

	tx      *sql.Tx   // non-nil when bound to a transaction
	pending *[]string // channels to publish after commit
	// inserted are the source kinds of the asset events recorded in the
	// transaction, for the observers after commit.
	inserted *[]string
	// checks run, in order, before the transaction commits: what a
	// deferred statement's answer decides (beforeCommit).
	checks *[]func() error
}

var _ store.Store = (*Store)(nil)

// New returns a Store over the given pools. It does not migrate.
func New(cfg Config) *Store {
	r := cfg.Read
	if r == nil {
		r = cfg.Write
	}
	s := &Store{d: cfg.Dialect, w: cfg.Write, r: r, hub: newHub(),
		origin: uuid.NewString(), mig: cfg.Migrations, close: cfg.OnClose, box: cfg.Secrets,
		obs: &observers{}}
	s.events = newEventBatcher(s)
	if cfg.Dialect.NotifySQL != "" {
		log := cfg.Logger
		if log == nil {
			log = slog.New(slog.DiscardHandler)
		}
		s.notifier = newNotifier(cfg.Write, cfg.Dialect.NotifySQL, s.origin, log)
	}
	return s
}

// Dialect names the engine.
func (s *Store) Dialect() string { return s.d.Name }

// DB returns the pool used for writes, for administration and tests.
func (s *Store) DB() *sql.DB { return s.w }

// RoundTrip returns the median time of n pings of the database on one
// connection (the first, which may open it, not counted): what a
// statement's round trip costs beside its work.
func (s *Store) RoundTrip(ctx context.Context, n int) (time.Duration, error) {
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	times := make([]time.Duration, 0, n)
	for i := -1; i < n; i++ {
		t0 := time.Now()
		if err := conn.PingContext(ctx); err != nil {
			return 0, err
		}
		if i >= 0 {
			times = append(times, time.Since(t0))
		}
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

// Close stops notification delivery and closes the pools.
func (s *Store) Close() error {
	if s.tx != nil {
		return errors.New("close store: called on a transaction-bound store")
	}
	var err error
	s.once.Do(func() {
		if s.notifier != nil {
			s.notifier.stop()
		}
		if s.close != nil {
			s.close()
		}
		s.hub.closeAll()
		err = s.w.Close()
		if s.r != s.w {
			err = errors.Join(err, s.r.Close())
		}
	})
	return err
}

// reader returns where reads go: the transaction, or the read pool.
func (s *Store) reader() querier {
	if s.tx != nil {
		return s.tx
	}
	return s.r
}

// writer returns where single-statement writes go.
func (s *Store) writer() querier {
	if s.tx != nil {
		return s.tx
	}
	return s.w
}

// WithTx runs fn in one transaction on the write pool. Called on a Store that
// is already bound to a transaction, fn joins it. Notifications sent through
// tx are published only after a successful commit.
func (s *Store) WithTx(ctx context.Context, fn func(tx store.Store) error) error {
	return s.inTx(ctx, func(tx *Store) error { return fn(tx) })
}

// WithQueueLock runs fn in a transaction that first takes
// Dialect.QueueLockSQL (on SQLite the transaction is the lock).
func (s *Store) WithQueueLock(ctx context.Context, fn func(tx store.Store) error) error {
	return s.inTx(ctx, func(tx *Store) error {
		if s.d.QueueLockSQL != "" {
			if _, err := tx.tx.ExecContext(ctx, s.d.QueueLockSQL, queueLockKey); err != nil {
				return s.wrap(err, "take the queueing lock")
			}
		}
		return fn(tx)
	})
}

// TryQueueLock takes Dialect.TryQueueLockSQL in s's transaction, as a
// Deferred statement whose answer held reads once it ran.
func (s *Store) TryQueueLock(ctx context.Context) (held func() (bool, error), err error) {
	if s.tx == nil {
		return nil, fmt.Errorf("take the queueing lock outside a transaction: %w", core.ErrInvalid)
	}
	if s.d.TryQueueLockSQL == "" {
		return func() (bool, error) { return true, nil }, nil
	}
	rows, err := s.execCounted(ctx, s.d.TryQueueLockSQL, queueLockKey) // 1 when the lock was taken, 0 when not
	if err != nil {
		return nil, s.wrap(err, "take the queueing lock")
	}
	return func() (bool, error) {
		n, err := rows()
		return n == 1, s.wrap(err, "take the queueing lock")
	}, nil
}

// beforeCommit has s's transaction run check before it commits, and
// fail if check does.
func (s *Store) beforeCommit(check func() error) {
	*s.checks = append(*s.checks, check)
}

// execCounted runs query in s's transaction as a DeferredCounted
// statement: it goes with the transaction's next statement where the
// engine pipelines them. rows returns its row count, sending it with a
// statement of its own when nothing carried it yet.
func (s *Store) execCounted(ctx context.Context, query string, args ...any) (rows func() (int64, error), err error) {
	n := int64(-1)
	res, err := s.tx.ExecContext(DeferredCounted(ctx, &n), query, args...)
	if err != nil {
		return nil, err
	}
	if sent, err := res.RowsAffected(); err == nil {
		n = sent // sent at once
	}
	return func() (int64, error) {
		if n < 0 {
			if _, err := s.tx.ExecContext(ctx, "SELECT 1"); err != nil {
				return 0, err
			}
		}
		if n < 0 {
			return 0, errors.New("its statement ran but its answer is not known")
		}
		return n, nil
	}, nil
}

// queryAhead runs query, Ahead in s's transaction where the engine sends
// such a query with the transaction's next statement (Dialect.QueriesAhead);
// read scans its rows when the returned function is first called (at once
// elsewhere: the rows are not left open under the statements that follow).
// Its errors name what the query does.
func queryAhead[T any](ctx context.Context, s *Store, what, query string, args []any, read func(*sql.Rows) (T, error)) func() (T, error) {
	var v T
	rows, err := s.reader().QueryContext(Ahead(ctx), query, args...)
	if err == nil && (!s.d.QueriesAhead || s.tx == nil || len(args) == 0) { // run at once: read now
		v, err = read(rows)
		rows = nil
	}
	return func() (T, error) {
		if rows != nil {
			v, err = read(rows)
			rows = nil
		}
		return v, s.wrap(err, "%s", what)
	}
}

// queueLockKey names the queueing lock among PostgreSQL advisory locks.
const queueLockKey int64 = 0x77656972_71756575 // "weirqueu"

// inTx is WithTx for the Store's own multi-statement methods.
func (s *Store) inTx(ctx context.Context, fn func(tx *Store) error) (err error) {
	if s.tx != nil {
		return fn(s)
	}
	sqlTx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(err, "begin transaction")
	}
	pending, inserted, checks := []string{}, []string{}, []func() error{}
	txs := &Store{d: s.d, w: s.w, r: s.r, hub: s.hub, origin: s.origin, mig: s.mig, box: s.box,
		events: s.events, tx: sqlTx, pending: &pending, obs: s.obs, inserted: &inserted, notifier: s.notifier,
		checks: &checks}
	committed := false
	defer func() {
		if !committed {
			_ = sqlTx.Rollback() // the error that made us roll back is the one to report
		}
	}()
	if err := fn(txs); err != nil {
		return err
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	if err := sqlTx.Commit(); err != nil {
		return s.wrap(err, "commit transaction")
	}
	committed = true
	for _, ch := range pending {
		s.published(ch)
	}
	if len(inserted) > 0 {
		s.obs.committed(inserted)
	}
	return nil
}

// deferredKey marks the context of a statement that may wait (Deferred).
type deferredKey struct{}

// Deferred marks a write run with the returned context as one whose result
// nobody reads but its error: in a transaction a driver may send it with
// the transaction's next statement or its commit (PostgreSQL: one round
// trip for both), which then fails with it; a rollback drops it unsent.
// Its arguments are read when it is sent: they must not change after the
// call. Outside a transaction, without arguments, and on SQLite, it runs at
// once.
func Deferred(ctx context.Context) context.Context {
	return context.WithValue(ctx, deferredKey{}, true)
}

// IsDeferred reports whether ctx marks its statement Deferred.
func IsDeferred(ctx context.Context) bool {
	d, _ := ctx.Value(deferredKey{}).(bool)
	return d
}

// deferredCountKey holds where a Deferred statement's row count goes.
type deferredCountKey struct{}

// DeferredCounted is Deferred, and the driver writes the statement's row
// count to *n once it ran (a statement sent at once returns it instead;
// one never sent leaves *n as it was).
func DeferredCounted(ctx context.Context, n *int64) context.Context {
	return context.WithValue(Deferred(ctx), deferredCountKey{}, n)
}

// DeferredCount is where ctx's Deferred statement's row count goes (nil:
// nowhere).
func DeferredCount(ctx context.Context) *int64 {
	n, _ := ctx.Value(deferredCountKey{}).(*int64)
	return n
}

// aheadKey marks the context of a query whose rows may wait (Ahead).
type aheadKey struct{}

// Ahead marks a query run with the returned context as one whose rows are
// read after the transaction's next statement is sent: in a transaction a
// driver may send it with that statement (PostgreSQL: one round trip for
// both), or with the first read of its rows, when nothing else went first.
// A rollback drops it unsent. Outside a transaction, without arguments, and
// on SQLite, it runs at once; Dialect.QueriesAhead says which.
func Ahead(ctx context.Context) context.Context {
	return context.WithValue(ctx, aheadKey{}, true)
}

// IsAhead reports whether ctx marks its query Ahead.
func IsAhead(ctx context.Context) bool {
	a, _ := ctx.Value(aheadKey{}).(bool)
	return a
}

// inTxIf is inTx when fn runs several statements (many), and fn on s
// otherwise: one statement is atomic by itself, and a transaction would cost
// a round trip more (COMMIT; BEGIN goes with the first statement) on
// PostgreSQL.
func (s *Store) inTxIf(ctx context.Context, many bool, fn func(tx *Store) error) error {
	if !many {
		return fn(s)
	}
	return s.inTx(ctx, fn)
}

// wrap turns a driver error into one naming what was being done, mapped to
// a core sentinel where one applies. The driver error's text is kept, its
// type is not.
func (s *Store) wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	msg := fmt.Sprintf(format, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", msg, errNotFound)
	}
	if s.d.Classify != nil {
		if sentinel := s.d.Classify(err); sentinel != nil {
			return fmt.Errorf("%s: %w: %v", msg, sentinel, err) //nolint:errorlint // driver errors stop at the adapter boundary (CONVENTIONS §3)
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", msg, err)
	}
	if connectionLost(err) {
		s.dropIdle()
		return fmt.Errorf("%s: %w: %v", msg, core.ErrUnavailable, err) //nolint:errorlint // driver errors stop at the adapter boundary (CONVENTIONS §3)
	}
	return fmt.Errorf("%s: %v", msg, err) //nolint:errorlint // driver errors stop at the adapter boundary (CONVENTIONS §3)
}

// Unreachable reports whether err says the database could not be reached
// (core.ErrUnavailable, or a connection refused or broken while opening or
// migrating): a role starting then waits for it instead of exiting.
func Unreachable(err error) bool { return errors.Is(err, core.ErrUnavailable) || connectionLost(err) }

// connectionLost reports whether err means the connection to the database
// broke (the server restarted or the network failed), not that the
// statement was wrong.
func connectionLost(err error) bool {
	var ne net.Error
	// SQLSTATE class 57P: the server is shutting down or not yet accepting
	// connections (a restart in progress).
	var state interface{ SQLState() string }
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, sql.ErrConnDone) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.As(err, &ne) ||
		errors.As(err, &state) && strings.HasPrefix(state.SQLState(), "57P")
}

// dropIdle closes the pools' idle connections after one was found broken:
// they were opened before the same fault, and each would otherwise fail one
// more request before the pool replaced it.
func (s *Store) dropIdle() {
	for _, db := range []*sql.DB{s.w, s.r} {
		if db == nil || db == s.w && s.tx != nil {
			continue
		}
		n := db.Stats().MaxOpenConnections
		db.SetMaxIdleConns(0) // closes the idle connections
		db.SetMaxIdleConns(n)
	}
}
