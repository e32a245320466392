package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/weirflow/weir/internal/testutil/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestDSNGivesIsolatedDatabases(t *testing.T) {
	ctx := t.Context()
	a, b := pgtest.DSN(t), pgtest.DSN(t)
	if a == b {
		t.Fatalf("two calls gave the same database %s", a)
	}
	exec(ctx, t, a, "CREATE TABLE only_in_a (x int)")
	ca, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	var n int
	if err := ca.QueryRow(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'only_in_a'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("a table created in one test database is visible in another")
	}
}

func exec(ctx context.Context, t *testing.T, dsn, stmt string) {
	t.Helper()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, stmt); err != nil {
		t.Fatal(err)
	}
}
