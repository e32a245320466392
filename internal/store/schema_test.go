package store_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/store/postgres"
	"github.com/weirflow/weir/internal/store/sqlite"
	"github.com/weirflow/weir/internal/testutil/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestEnginesHaveSameSchema asserts that both engines' migrations reach the
// same tables with the same column names, so one SQL text serves both.
func TestEnginesHaveSameSchema(t *testing.T) {
	ctx := t.Context()
	lite, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "weir.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lite.Close() })
	pg, err := postgres.Open(ctx, pgtest.DSN(t), postgres.Options{NoListen: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Close() })
	for _, m := range []interface{ Migrate(context.Context) error }{lite, pg} {
		if err := m.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	liteCols := columns(t, lite.DB(), `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`)
	pgCols := columns(t, pg.DB(), `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema()`)
	if len(liteCols) < 10 {
		t.Fatalf("sqlite schema has only %d tables: %v", len(liteCols), liteCols)
	}
	if diff := cmp.Diff(liteCols, pgCols); diff != "" {
		t.Errorf("schemas differ (-sqlite +postgres):\n%s", diff)
	}
}

// columns returns table → set of column names (goose's own table excluded).
func columns(t *testing.T, db *sql.DB, query string) map[string]map[string]bool {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]map[string]bool{}
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		if table == "goose_db_version" {
			continue
		}
		if out[table] == nil {
			out[table] = map[string]bool{}
		}
		out[table][col] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
