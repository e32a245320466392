package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	sqlite "modernc.org/sqlite"
)

func openCaching(t *testing.T) *sql.DB {
	t.Helper()
	db := sql.OpenDB(cachingConnector{dsn: "file:" + filepath.Join(t.TempDir(), "c.db"), drv: &sqlite.Driver{}})
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := db.Exec(`INSERT INTO t (id, v) VALUES (?, ?)`, i, fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// connectCaching is one caching connection to a new database, closed
// with the test.
func connectCaching(t *testing.T) *cachingConn {
	t.Helper()
	c := cachingConnector{dsn: "file:" + filepath.Join(t.TempDir(), "c.db"), drv: &sqlite.Driver{}}
	dc, err := c.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dc.Close() })
	return dc.(*cachingConn)
}

// A statement closed by database/sql stays compiled and is handed out
// again; one whose handle is still open is not shared.
func TestStatementsStayCompiled(t *testing.T) {
	ctx := context.Background()
	conn := connectCaching(t)
	const q = `SELECT 1`
	a, err := conn.PrepareContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	busy, err := conn.PrepareContext(ctx, q) // a's handle is open
	if err != nil {
		t.Fatal(err)
	}
	if _, shared := busy.(*stmtHandle); shared {
		t.Fatal("a statement with an open handle was handed out twice")
	}
	_ = busy.Close()
	_ = a.Close()
	b, err := conn.PrepareContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if b.(*stmtHandle).st != a.(*stmtHandle).st {
		t.Fatal("a closed statement was compiled again instead of reused")
	}
	_ = b.Close()

	// Past the bound, the least recently used statement is evicted and
	// closed; the cache keeps its size.
	for i := range stmtCacheSize + 10 {
		h, err := conn.PrepareContext(ctx, fmt.Sprintf("SELECT %d", i))
		if err != nil {
			t.Fatal(err)
		}
		_ = h.Close()
	}
	if n := conn.lru.Len(); n != stmtCacheSize {
		t.Fatalf("cache holds %d statements, want %d", n, stmtCacheSize)
	}
	if !a.(*stmtHandle).st.evicted {
		t.Fatal("the least recently used statement is still cached")
	}
}

// The same query run while its own rows are still being read (a nested
// query) gets a statement of its own: both read every row.
func TestNestedRunsOfOneQuery(t *testing.T) {
	db := openCaching(t)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	const q = `SELECT id FROM t ORDER BY id`
	outer, err := tx.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	pairs := 0
	for outer.Next() {
		var o int
		if err := outer.Scan(&o); err != nil {
			t.Fatal(err)
		}
		inner, err := tx.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for inner.Next() {
			pairs++
		}
		if err := inner.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := outer.Close(); err != nil {
		t.Fatal(err)
	}
	if pairs != 25 {
		t.Fatalf("nested reads saw %d pairs, want 25", pairs)
	}
}

// An evicted statement whose rows are still open is closed only when they
// are, and reading them is not disturbed.
func TestEvictionWaitsForOpenRows(t *testing.T) {
	ctx := context.Background()
	db := openCaching(t)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, `SELECT v FROM t ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	rows.Next()
	for i := range stmtCacheSize + 1 { // evicts the open query's statement
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("SELECT %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	n := 1
	for rows.Next() {
		n++
	}
	if err := errorsOf(rows); err != nil || n != 5 {
		t.Fatalf("read %d rows after eviction (err %v), want 5", n, err)
	}
	err = conn.Raw(func(dc any) error {
		if _, cached := dc.(*cachingConn).byQuery[`SELECT v FROM t ORDER BY id`]; cached {
			return fmt.Errorf("the evicted statement is back in the cache")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func errorsOf(rows *sql.Rows) error {
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}

// The connection keeps the driver interfaces database/sql relies on.
var (
	_ driver.ConnPrepareContext = (*cachingConn)(nil)
	_ driver.ConnBeginTx        = (*cachingConn)(nil)
	_ driver.SessionResetter    = (*cachingConn)(nil)
	_ driver.Validator          = (*cachingConn)(nil)
	_ driver.StmtExecContext    = (*stmtHandle)(nil)
	_ driver.StmtQueryContext   = (*stmtHandle)(nil)
)

// BenchmarkCachedStatement measures one indexed read through the pool with
// and without the cache.
func BenchmarkCachedStatement(b *testing.B) {
	for _, cached := range []bool{false, true} {
		b.Run(fmt.Sprintf("cached=%v", cached), func(b *testing.B) {
			path := "file:" + filepath.Join(b.TempDir(), "c.db")
			var db *sql.DB
			if cached {
				db = sql.OpenDB(cachingConnector{dsn: path, drv: &sqlite.Driver{}})
			} else {
				var err error
				if db, err = sql.Open("sqlite", path); err != nil {
					b.Fatal(err)
				}
			}
			defer db.Close()
			db.SetMaxOpenConns(1)
			if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b TEXT, c INTEGER)`); err != nil {
				b.Fatal(err)
			}
			if _, err := db.Exec(`INSERT INTO t VALUES (1, 'x', 'y', 3)`); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				var a, bb string
				var c int
				if err := db.QueryRow(`SELECT a, b, c FROM t WHERE id = ? AND c > ? AND a <> ?`, 1, 0, "z").Scan(&a, &bb, &c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A statement with "LIMIT $n" is compiled once: its first run does not
// compile it again with the bound limit (fixedPlan), and the limit holds.
func TestLimitCompiledOnce(t *testing.T) {
	ctx := context.Background()
	conn := connectCaching(t)
	exec := func(q string) {
		t.Helper()
		st, err := conn.PrepareContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if _, err := st.(driver.StmtExecContext).ExecContext(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	exec(`CREATE TABLE t (id INTEGER PRIMARY KEY)`)
	exec(`INSERT INTO t (id) VALUES (1), (2), (3), (4), (5)`)
	compiled := 0 // SQLite asks the authorizer as it compiles a statement
	err := conn.conn.(sqlite.AuthorizerRegisterer).RegisterAuthorizer(func(a sqlite.AuthorizerActionCode, _, _, _, _ string) sqlite.AuthorizerReturnCode {
		if a == sqlite.AuthSelect {
			compiled++
		}
		return sqlite.AuthorizerOK
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := conn.PrepareContext(ctx, `SELECT id FROM t ORDER BY id LIMIT $1`)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, limit := range []int64{2, 2, 4, -1} {
		rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, []driver.NamedValue{{Ordinal: 1, Value: limit}})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next(make([]driver.Value, 1)) == nil {
			n++
		}
		_ = rows.Close()
		if want := map[int64]int{2: 2, 4: 4, -1: 5}[limit]; n != want {
			t.Errorf("LIMIT %d read %d rows, want %d", limit, n, want)
		}
	}
	if compiled != 1 {
		t.Errorf("the statement was compiled %d times over four runs, want once", compiled)
	}
}

// Every limit the store's SQL binds is spelled "LIMIT $n", the spelling
// fixedPlan rewrites: another ("limit $2", a line break before the
// placeholder) would be compiled twice again, silently.
func TestStoreLimitsAreSpelledForFixedPlan(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "sqlstore", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the store's sources: %v, %v", files, err)
	}
	boundLimit := regexp.MustCompile(`(?i)\blimit\s+(\$|\?|" *\+ *b\.arg)`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range boundLimit.FindAll(src, -1) {
			if s := string(m); s != "LIMIT $" && s != `LIMIT " + b.arg` {
				t.Errorf("%s: %q binds a limit spelled otherwise than \"LIMIT $n\" (fixedPlan)", f, s)
			}
		}
	}
	if got := fixedPlan("SELECT 1 LIMIT $3 OFFSET $4"); got != "SELECT 1 LIMIT +$3 OFFSET $4" {
		t.Errorf("fixedPlan = %q", got)
	}
}
