package sqlcount

import (
	"testing"

	"github.com/weirflow/weir/internal/store/sqlite"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

// OpenSQLite migrates the SQLite database file at path and returns a store
// over it whose every statement c records: one connection for reads and
// writes, foreign keys on, as the real store runs them. It is closed when
// tb ends.
func OpenSQLite(tb testing.TB, path string) (*sqlstore.Store, *Counter) {
	tb.Helper()
	mig, err := sqlite.Open(tb.Context(), path, sqlite.Options{})
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	if err := mig.Migrate(tb.Context()); err != nil {
		tb.Fatalf("migrate %s: %v", path, err)
	}
	if err := mig.Close(); err != nil {
		tb.Fatalf("close %s: %v", path, err)
	}
	c := &Counter{}
	db, err := OpenDB("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)", c)
	if err != nil {
		tb.Fatalf("open counted %s: %v", path, err)
	}
	db.SetMaxOpenConns(1)
	st := sqlstore.New(sqlstore.Config{Dialect: sqlite.Dialect(), Write: db})
	tb.Cleanup(func() {
		if err := st.Close(); err != nil {
			tb.Errorf("close counted store: %v", err)
		}
	})
	return st, c
}
