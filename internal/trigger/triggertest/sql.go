package triggertest

import (
	"database/sql"
	"net/url"
	"testing"

	"github.com/weirflow/weir/internal/operator"
)

// OpenSQL opens the database of a connection URI (postgres:// or
// sqlite:///path) as the sql triggers do, closed when t ends; the test
// links the driver.
func OpenSQL(t testing.TB, uri string) *sql.DB {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	driver, dsn, err := operator.SQLDSN(u)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
