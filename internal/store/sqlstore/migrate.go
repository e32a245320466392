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
	Current int64   // version applied to the database (0 = none)
	Latest  int64   // newest version this binary knows
	Pending []int64 // versions not yet applied, in order
}

// UpToDate reports whether no migration is pending.
func (m *MigrationStatus) UpToDate() bool { return len(m.Pending) == 0 }

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
	p, err := s.provider()
	if err != nil {
		return fmt.Errorf("migrate %s database: %w", s.d.Name, err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate %s database: %w", s.d.Name, err)
	}
	return nil
}

// MigrationStatus reports the applied and pending migrations without
// changing anything.
func (s *Store) MigrationStatus(ctx context.Context) (*MigrationStatus, error) {
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
	return st, nil
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
