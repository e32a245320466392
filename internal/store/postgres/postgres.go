// Package postgres opens Weir's store on PostgreSQL through pgx's
// database/sql adapter: embedded goose migrations (run under an advisory
// session lock so concurrent processes migrate one at a time), claims with
// SELECT ... FOR UPDATE SKIP LOCKED, and notifications through pg_notify
// with a dedicated LISTEN connection (native pgx) that wakes this process's
// subscribers when another process notifies.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// notifyChannel is the one PostgreSQL channel Weir uses; the payload names
// the Weir channel and the sending store.
const notifyChannel = "weir_events"

// Options tunes Open; the zero value is sensible.
type Options struct {
	// MaxConns bounds the connection pool (default 16).
	MaxConns int
	// NoListen disables the LISTEN connection: notifications from other
	// processes are then not received (this process's still are).
	NoListen bool
	// Logger receives LISTEN connection failures (default: discarded).
	Logger *slog.Logger
	// Secrets encrypts connection URIs at rest (sqlstore.Config.Secrets).
	Secrets *secrets.Box
	// CheckRoom makes Open warn through Logger when the pool (MaxConns)
	// and the LISTEN connection do not fit in what the server has left
	// (Room): a role's start, not an admin command's.
	CheckRoom bool
}

// Open connects to the database named by dsn (a postgres:// URL or
// key=value string). It does not migrate: call Migrate (or check
// MigrationStatus) before use.
func Open(ctx context.Context, dsn string, opts Options) (*sqlstore.Store, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres database: parse dsn: %w", err)
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 16
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	db := sql.OpenDB(pipelineConnector{base: stdlib.GetConnector(*cfg)})
	db.SetMaxOpenConns(opts.MaxConns)
	db.SetMaxIdleConns(opts.MaxConns)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close() // the ping error is the one to report
		return nil, fmt.Errorf("open postgres database %s@%s/%s: %w", cfg.User, cfg.Host, cfg.Database, err)
	}
	if opts.CheckRoom {
		// Now, before the LISTEN connection: the pool holds the one
		// connection of the ping, so every other is another process's.
		room, err := roomFor(ctx, db, opts.MaxConns)
		switch {
		case err != nil:
			opts.Logger.WarnContext(ctx, "could not check that the connection pool fits in PostgreSQL's max_connections", "err", err)
		case !room.Fits():
			opts.Logger.WarnContext(ctx, "the connection pool does not fit in what PostgreSQL has left: "+room.String(),
				"pool_size", opts.MaxConns, "max_connections", room.MaxConnections, "reserved_connections", room.Reserved,
				"connections_in_use", room.InUse)
		}
	}
	mig, err := migrations()
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	var l *listener
	scfg := sqlstore.Config{Dialect: Dialect(), Write: db, Migrations: mig, Secrets: opts.Secrets, Logger: opts.Logger}
	if !opts.NoListen {
		l = &listener{cfg: cfg, log: opts.Logger}
		scfg.OnClose = l.stop
	}
	st := sqlstore.New(scfg)
	if l != nil {
		l.start(st)
	}
	return st, nil
}

// Dialect describes PostgreSQL to sqlstore.
func Dialect() sqlstore.Dialect {
	return sqlstore.Dialect{
		Name:      "postgres",
		BlobType:  "BYTEA",
		ClaimLock: "FOR UPDATE SKIP LOCKED",
		RowLock:   "FOR UPDATE",
		NotifySQL: "SELECT pg_notify('" + notifyChannel + "', $1)",
		// Airflow locks the slot_pool rows; one advisory lock is the same
		// critical section without a row per pool.
		QueueLockSQL:    "SELECT pg_advisory_xact_lock($1)",
		TryQueueLockSQL: "SELECT 1 WHERE pg_try_advisory_xact_lock($1)",
		GroupInserts:    true,
		ClaimJoinsRuns:  true,
		QueriesAhead:    true,
		Classify:        classify,
	}
}

// classify maps PostgreSQL error codes to core sentinels.
func classify(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return nil
	}
	switch pe.Code {
	case "23505": // unique_violation
		return core.ErrConflict
	case "23503": // foreign_key_violation
		return core.ErrNotFound
	case "22P02": // invalid_text_representation, e.g. a malformed UUID
		return core.ErrInvalid
	}
	return nil
}

func migrations() (*sqlstore.Migrations, error) {
	fsys, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("load postgres migrations: %w", err)
	}
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, fmt.Errorf("load postgres migrations: %w", err)
	}
	return &sqlstore.Migrations{FS: fsys, Dialect: goose.DialectPostgres,
		Options: []goose.ProviderOption{goose.WithSessionLocker(locker)}, DropAll: dropAll}, nil
}

// dropAll drops and recreates the current schema (public by default).
func dropAll(ctx context.Context, db *sql.DB) error {
	_, err := db.ExecContext(ctx, `DO $$ DECLARE s text := current_schema(); BEGIN
		EXECUTE format('DROP SCHEMA %I CASCADE', s);
		EXECUTE format('CREATE SCHEMA %I', s);
	END $$`)
	return err
}
