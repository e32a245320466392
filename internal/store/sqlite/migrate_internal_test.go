package sqlite

import (
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pressly/goose/v3"
)

// Migration 00033 moves dag_file.dags to the row's end (a listing without
// the DAGs then reads no overflow page): every recorded parse is kept, up
// and down.
func TestDagFileMigrationKeepsTheRecords(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "weir.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(m.Dialect, db, m.FS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 32); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO dag_file (fileloc, parser, sum, dag_ids, dags, error, parsed_at) VALUES
		('/dags/a.yaml', 'p1', 's1', '["a"]', '[{"dag_id":"a"}]', '', 1), ('/dags/b.yaml', 'p1', 's2', '[]', '', 'bad', 2)`); err != nil {
		t.Fatal(err)
	}
	rows := func() [][]string {
		t.Helper()
		r, err := db.QueryContext(ctx, `SELECT fileloc, parser, sum, dag_ids, dags, error, parsed_at FROM dag_file ORDER BY fileloc`)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out [][]string
		for r.Next() {
			row := make([]string, 7)
			if err := r.Scan(&row[0], &row[1], &row[2], &row[3], &row[4], &row[5], &row[6]); err != nil {
				t.Fatal(err)
			}
			out = append(out, row)
		}
		return out
	}
	lastColumn := func() string {
		t.Helper()
		var name string
		if err := db.QueryRowContext(ctx, `SELECT name FROM pragma_table_info('dag_file') ORDER BY cid DESC LIMIT 1`).Scan(&name); err != nil {
			t.Fatal(err)
		}
		return name
	}
	before := rows()
	for _, step := range []struct {
		to   int64
		last string
		move func() error
	}{
		{33, "dags", func() error { _, err := p.UpTo(ctx, 33); return err }},
		{32, "parsed_at", func() error { _, err := p.DownTo(ctx, 32); return err }},
	} {
		if err := step.move(); err != nil {
			t.Fatalf("migrate to %d: %v", step.to, err)
		}
		if got := rows(); !slices.EqualFunc(got, before, slices.Equal) {
			t.Errorf("at %d: rows %v, want %v", step.to, got, before)
		}
		if got := lastColumn(); got != step.last {
			t.Errorf("at %d: the last column is %s, want %s", step.to, got, step.last)
		}
	}
}
