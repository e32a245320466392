package storetest

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

// resealer is what `weir connections rotate-key` uses of a store.
type resealer interface {
	Reseal(ctx context.Context) (sqlstore.Resealed, error)
}

// testConnectionsAtRest: a connection's URI (password, extras) is stored
// encrypted and bound to its id; rows stored in plain text by an older
// version stay readable until a reseal encrypts them (issue 13, finding 4).
func testConnectionsAtRest(t *testing.T, f *fixture) {
	db, ok := f.st.(interface{ DB() *sql.DB })
	rs, ok2 := f.st.(resealer)
	if !ok || !ok2 {
		t.Fatalf("store %T has no DB() or Reseal", f.st)
	}
	raw := func(id string) string {
		t.Helper()
		var uri string
		must(t, db.DB().QueryRowContext(f.ctx, `SELECT uri FROM connection WHERE conn_id = $1`, id).Scan(&uri), "read raw row")
		return uri
	}
	const uri = "postgres://etl:s3cret-pw@db:5432/dw?sslkey=k3y-extra" //nolint:gosec // a test fixture, not a credential
	const legacy = "https://u:old-pw@api"                              //nolint:gosec // a test fixture, not a credential
	must(t, f.st.ConnectionUpsert(f.ctx, &core.Connection{ID: "wh", URI: uri}), "create")
	if got := raw("wh"); strings.Contains(got, "s3cret-pw") || strings.Contains(got, "k3y-extra") || !secrets.IsSealed(got) {
		t.Fatalf("stored uri = %q, want it encrypted", got)
	}
	if c, err := f.st.ConnectionGet(f.ctx, "wh"); err != nil || c.URI != uri {
		t.Fatalf("get = %+v, %v; want the plain uri", c, err)
	}

	// A row from before encryption reads as it is; moving a sealed value
	// to another row does not decrypt.
	_, err := db.DB().ExecContext(f.ctx, `INSERT INTO connection (conn_id, uri) VALUES ('legacy', $1), ('moved', $2)`, legacy, raw("wh"))
	must(t, err, "insert raw rows")
	if c, err := f.st.ConnectionGet(f.ctx, "legacy"); err != nil || c.URI != legacy {
		t.Fatalf("legacy row = %+v, %v", c, err)
	}
	if _, err := f.st.ConnectionGet(f.ctx, "moved"); err == nil || !strings.Contains(err.Error(), "moved from another row") {
		t.Fatalf("moved sealed value: %v, want a decryption error", err)
	}
	_, err = db.DB().ExecContext(f.ctx, `DELETE FROM connection WHERE conn_id = 'moved'`)
	must(t, err, "delete moved row")

	// Reseal encrypts the legacy rows (a connection and a variable) and
	// leaves rows already under the primary key.
	must(t, f.st.VariableUpsert(f.ctx, &core.Variable{Key: "sealed", Value: "v1"}), "create variable")
	_, err = db.DB().ExecContext(f.ctx, `INSERT INTO variable (key, val, description) VALUES ('legacy_var', 'old-value', '')`)
	must(t, err, "insert raw variable")
	n, err := rs.Reseal(f.ctx)
	must(t, err, "reseal")
	if n != (sqlstore.Resealed{Connections: 1, Variables: 1}) || !secrets.IsSealed(raw("legacy")) || strings.Contains(raw("legacy"), "old-pw") {
		t.Fatalf("reseal rewrote %+v, legacy row = %q; want 1 connection and 1 variable, encrypted", n, raw("legacy"))
	}
	var rawVar string
	must(t, db.DB().QueryRowContext(f.ctx, `SELECT val FROM variable WHERE key = 'legacy_var'`).Scan(&rawVar), "read raw variable")
	if !secrets.IsSealed(rawVar) || strings.Contains(rawVar, "old-value") {
		t.Fatalf("legacy variable after reseal = %q, want it encrypted", rawVar)
	}
	if v, err := f.st.VariableGet(f.ctx, "legacy_var"); err != nil || v.Value != "old-value" {
		t.Fatalf("legacy variable after reseal = %+v, %v", v, err)
	}
	if c, err := f.st.ConnectionGet(f.ctx, "legacy"); err != nil || c.URI != legacy {
		t.Fatalf("legacy row after reseal = %+v, %v", c, err)
	}
}
