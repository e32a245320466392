package postgres

import (
	"database/sql"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/weirflow/weir/internal/testutil/pgtest"
)

// BenchmarkRoundTrip measures the unit a PostgreSQL chain step is counted
// in (docs/performance-history.md, issue 14's ninth round): one statement's round
// trip on loopback through database/sql and pgx, a query (SELECT 1) and a
// transaction of one insert, its BEGIN on its own (pgx's driver) or sent
// with the insert (pipelineConnector).
func BenchmarkRoundTrip(b *testing.B) {
	cfg, err := pgx.ParseConfig(pgtest.DSN(b))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		open func() *sql.DB
	}{
		{"pgx", func() *sql.DB { return stdlib.OpenDB(*cfg) }},
		{"pipeline", func() *sql.DB { return sql.OpenDB(pipelineConnector{base: stdlib.GetConnector(*cfg)}) }},
	} {
		db := c.open()
		db.SetMaxOpenConns(1)
		ctx := b.Context()
		if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS rt (k BIGINT PRIMARY KEY)`); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/select", func(b *testing.B) {
			var one int
			for range b.N {
				if err := db.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/tx-insert", func(b *testing.B) {
			if _, err := db.ExecContext(ctx, `TRUNCATE rt`); err != nil {
				b.Fatal(err)
			}
			for i := range b.N {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO rt (k) VALUES ($1)`, i); err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
		})
		_ = db.Close()
	}
}
