package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
)

// Migrations describes an engine's embedded schema migrations.
type Migrations struct {
	// FS holds the numbered goose .sql files at its root.
	FS fs.FS
	// Dialect is goose's name for the engine.
	Dialect goose.Dialect
	// Options are extra goose provider options (e.g. a session locker so
	// that concurrent processes migrate one at a time).
	Options []goose.ProviderOption
	// DropAll removes every table of the schema, goose's own included.
	DropAll func(ctx context.Context, db *sql.DB) error
}

// MigrationStatus says where the schema stands.
type MigrationStatus struct {
	Current int64   // newest version applied to the database (0 = none)
	Latest  int64   // newest version this binary knows
	Pending []int64 // versions not yet applied, in order
}

// UpToDate reports whether no migration is pending.
func (m *MigrationStatus) UpToDate() bool { return len(m.Pending) == 0 }

// Newer reports whether a newer binary migrated the database past what this
// one knows (which it runs on during an upgrade: docs/deployment.md#upgrades).
func (m *MigrationStatus) Newer() bool { return m.Current > m.Latest }

var errNoMigrations = errors.New("this store has no migrations configured")

func (s *Store) provider() (*goose.Provider, error) {
	if s.mig == nil {
		return nil, errNoMigrations
	}
	p, err := goose.NewProvider(s.mig.Dialect, s.w, s.mig.FS, s.mig.Options...)
	if err != nil {
		return nil, fmt.Errorf("load %s migrations: %w", s.d.Name, err)
	}
	return p, nil
}

// Migrate applies every pending migration.
func (s *Store) Migrate(ctx context.Context) error {
	if latest, err := s.allApplied(ctx); err == nil && latest > 0 {
		return nil
	}
	p, err := s.provider()
	if err != nil {
		return fmt.Errorf("migrate %s database: %w", s.d.Name, err)
	}
	from, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("migrate %s database: %w", s.d.Name, err)
	}
	applied, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrate %s database: %w", s.d.Name, err)
	}
	if len(applied) > 0 {
		s.migrated = [2]int64{from, applied[len(applied)-1].Source.Version}
	}
	return nil
}

// Migrated returns the schema version the store's Migrate found and the
// one it left; ok is false when it applied no migration.
func (s *Store) Migrated() (from, to int64, ok bool) {
	return s.migrated[0], s.migrated[1], s.migrated[1] > 0
}

// MigrationStatus reports the applied and pending migrations without
// changing anything.
func (s *Store) MigrationStatus(ctx context.Context) (*MigrationStatus, error) {
	if latest, err := s.allApplied(ctx); err == nil && latest > 0 {
		return &MigrationStatus{Current: latest, Latest: latest}, nil
	}
	p, err := s.provider()
	if err != nil {
		return nil, fmt.Errorf("check %s migrations: %w", s.d.Name, err)
	}
	all, err := p.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("check %s migrations: %w", s.d.Name, err)
	}
	st := &MigrationStatus{}
	for _, m := range all {
		v := m.Source.Version
		st.Latest = max(st.Latest, v)
		if m.State == goose.StateApplied {
			st.Current = max(st.Current, v)
		} else {
			st.Pending = append(st.Pending, v)
		}
	}
	// goose lists the versions this binary embeds: a newer one's are read
	// from its table.
	var newest sql.NullInt64
	if err := s.w.QueryRowContext(ctx, qNewestApplied).Scan(&newest); err == nil && newest.Int64 > st.Current {
		st.Current = newest.Int64
	}
	return st, nil
}

// qNewestApplied is the newest migration goose recorded as applied.
const qNewestApplied = `SELECT MAX(version_id) FROM goose_db_version WHERE is_applied`

// qMigrationsApplied lists the migrations goose recorded as applied
// (version 0 is the row goose adds with its table).
const qMigrationsApplied = `SELECT DISTINCT version_id FROM goose_db_version WHERE version_id > 0 AND is_applied`

// allApplied answers the question of every start, whether the schema is
// up to date, with one statement: it returns the newest embedded version
// when the migrations recorded as applied are exactly the embedded ones,
// and 0 when not (goose's provider, which reads its version table with
// several statements, and on PostgreSQL takes a session lock, then says
// which are pending, or what is wrong).
func (s *Store) allApplied(ctx context.Context) (int64, error) {
	if s.mig == nil {
		return 0, errNoMigrations
	}
	files, err := fs.Glob(s.mig.FS, "*.sql")
	if err != nil {
		return 0, err
	}
	embedded := make(map[int64]bool, len(files))
	var latest int64
	for _, f := range files {
		v, err := goose.NumericComponent(f)
		if err != nil {
			return 0, err
		}
		embedded[v], latest = true, max(latest, v)
	}
	rows, err := s.w.QueryContext(ctx, qMigrationsApplied)
	if err != nil {
		return 0, err // no version table yet, say
	}
	defer rows.Close()
	applied := 0
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return 0, err
		}
		if !embedded[v] {
			return 0, nil // a version this binary does not know
		}
		applied++
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if applied != len(embedded) {
		return 0, nil
	}
	return latest, nil
}

// Reset drops every table and migrates from scratch. All data is lost.
func (s *Store) Reset(ctx context.Context) error {
	if s.mig == nil {
		return fmt.Errorf("reset %s database: %w", s.d.Name, errNoMigrations)
	}
	if err := s.mig.DropAll(ctx, s.w); err != nil {
		return fmt.Errorf("reset %s database: drop tables: %w", s.d.Name, err)
	}
	return s.Migrate(ctx)
}
