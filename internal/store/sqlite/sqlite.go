// Package sqlite opens Weir's store on an embedded SQLite file
// (modernc.org/sqlite, no cgo): WAL journal, busy timeout,
// synchronous=NORMAL and foreign keys on; one writer connection used for
// every write and transaction (BEGIN IMMEDIATE, so a transaction never has to
// upgrade its lock) and a pool of read-only connections. The schema comes
// from the embedded goose migrations in migrations/.
package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"time"

	"github.com/pressly/goose/v3"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Options tunes Open; the zero value is sensible.
type Options struct {
	// BusyTimeout is how long a connection waits for a lock held by another
	// process before failing (default 5s).
	BusyTimeout time.Duration
	// ReadConns is the size of the read pool (default 4).
	ReadConns int
	// Logger notes database files whose modes Open tightened (nil = discard).
	Logger *slog.Logger
	// Secrets encrypts connection URIs at rest (sqlstore.Config.Secrets).
	Secrets *secrets.Box
	// CheckpointInterval is how long writes gather in the WAL before the
	// checkpointer copies them into the database file (default
	// DefaultCheckpointInterval).
	CheckpointInterval time.Duration
}

// Open opens (creating if needed) the database file at path. The file and
// its -wal and -shm companions are readable by their owner only (FileMode;
// looser modes are tightened and logged). It does not migrate: call Migrate
// (or check MigrationStatus) before use.
func Open(ctx context.Context, path string, opts Options) (*sqlstore.Store, error) {
	if path == "" || path == ":memory:" {
		return nil, fmt.Errorf("open sqlite database: a file path is required (got %q): %w", path, core.ErrInvalid)
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	if opts.ReadConns <= 0 {
		opts.ReadConns = 4
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.CheckpointInterval <= 0 {
		opts.CheckpointInterval = DefaultCheckpointInterval
	}
	if err := secureFiles(path, opts.Logger); err != nil {
		return nil, err
	}
	ckpt := newCheckpointer(dsn(path, opts, nil), opts.CheckpointInterval, opts.Logger)
	// The two pools open side by side: each connection parses the whole
	// schema as it opens, a few milliseconds that every command waits for.
	type pool struct {
		db  *sql.DB
		err error
	}
	read := make(chan pool, 1)
	go func() {
		r, err := openPool(ctx, path, opts, nil)
		read <- pool{r, err}
	}()
	w, err := openPool(ctx, path, opts, ckpt)
	rp := <-read
	if err != nil || rp.err != nil {
		if w != nil {
			_ = w.Close() // reporting the writer's error, else the read pool's
		}
		if rp.db != nil {
			_ = rp.db.Close()
		}
		return nil, cmp.Or(err, rp.err)
	}
	ckpt.start(w)
	r := rp.db
	r.SetMaxOpenConns(opts.ReadConns)
	r.SetMaxIdleConns(opts.ReadConns)
	mig, err := migrations()
	if err != nil {
		ckpt.stop()
		return nil, errors.Join(err, w.Close(), r.Close())
	}
	return sqlstore.New(sqlstore.Config{Dialect: Dialect(), Write: w, Read: r, Migrations: mig, Secrets: opts.Secrets,
		OnClose: ckpt.stop}), nil
}

// dsn is a connection string for the file: the pragmas every connection
// has, and extra (the writer's or a reader's; none for the checkpointer's).
// Every connection has the WAL's size limit: whichever closes last
// checkpoints, and leaves the WAL empty (persistWAL).
func dsn(path string, opts Options, extra url.Values) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "journal_size_limit(67108864)")
	for k, vs := range extra {
		for _, v := range vs {
			q.Add(k, v)
		}
	}
	return "file:" + path + "?" + q.Encode()
}

// openPool opens the writer (one connection, immediate transactions, its
// checkpoints left to ckpt) when ckpt is set, else the read-only pool.
func openPool(ctx context.Context, path string, opts Options, ckpt *checkpointer) (*sql.DB, error) {
	writer := ckpt != nil
	extra := url.Values{"_pragma": {"query_only(1)"}}
	var wrote func()
	if writer {
		extra = url.Values{"_pragma": {"journal_mode(WAL)", fmt.Sprintf("wal_autocheckpoint(%d)", walBackstopPages)},
			"_txlock": {"immediate"}}
		wrote = ckpt.noteWrite
	}
	db := sql.OpenDB(cachingConnector{dsn: dsn(path, opts, extra), drv: &sqlite.Driver{}, wrote: wrote})
	if writer {
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close() // the ping error is the one to report
		return nil, fmt.Errorf("open sqlite database %s: %w", path, err)
	}
	return db, nil
}

// Dialect describes SQLite to sqlstore: no row locks (the single writer
// serializes claims) and in-process notifications only.
func Dialect() sqlstore.Dialect {
	return sqlstore.Dialect{Name: "sqlite", BlobType: "BLOB", AnonymousParams: true, Classify: classify}
}

// classify maps SQLite constraint errors to core sentinels.
func classify(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return nil
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return core.ErrConflict
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return core.ErrNotFound
	}
	return nil
}

func migrations() (*sqlstore.Migrations, error) {
	fsys, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("load sqlite migrations: %w", err)
	}
	return &sqlstore.Migrations{FS: fsys, Dialect: goose.DialectSQLite3, DropAll: dropAll}, nil
}

// dropAll drops every table in the database file.
func dropAll(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			_ = rows.Close() // the scan error is the one to report
			return err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`) //nolint:errcheck // best effort restore
	for _, n := range names {
		if _, err := conn.ExecContext(ctx, `DROP TABLE IF EXISTS "`+n+`"`); err != nil {
			return fmt.Errorf("drop table %s: %w", n, err)
		}
	}
	return nil
}
