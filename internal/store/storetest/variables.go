package storetest

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/store"
)

// testVariables: docs/variables.md. A variable round-trips with its
// description, an upsert replaces it, the value is sealed at rest and
// bound to its key (a sealed value moved to another key does not open),
// and a missing key is ErrNotFound for a get and a delete.
func testVariables(t *testing.T, f *fixture) {
	db, ok := f.st.(interface{ DB() *sql.DB })
	if !ok {
		t.Fatalf("store %T has no DB()", f.st)
	}
	must(t, f.st.VariableUpsert(f.ctx, &core.Variable{Key: "api_password", Value: "s3cret-pw", Description: "the API's"}), "create")
	must(t, f.st.VariableUpsert(f.ctx, &core.Variable{Key: "region", Value: `{"name": "eu"}`}), "create")
	var raw string
	must(t, db.DB().QueryRowContext(f.ctx, `SELECT val FROM variable WHERE key = 'api_password'`).Scan(&raw), "raw")
	if strings.Contains(raw, "s3cret") || !secrets.IsSealed(raw) {
		t.Fatalf("stored value = %q, want it encrypted", raw)
	}
	if v, err := f.st.VariableGet(f.ctx, "api_password"); err != nil || v.Value != "s3cret-pw" || v.Description != "the API's" {
		t.Fatalf("get = %+v, %v", v, err)
	}
	must(t, f.st.VariableUpsert(f.ctx, &core.Variable{Key: "region", Value: "us"}), "replace")
	list, err := f.st.VariableList(f.ctx, &store.VariableListParams{})
	must(t, err, "list")
	if len(list) != 2 || list[0].Key != "api_password" || list[1].Value != "us" || list[1].Description != "" {
		t.Fatalf("list = %+v, want api_password, then region replaced", list)
	}
	_, err = db.DB().ExecContext(f.ctx, `INSERT INTO variable (key, val) VALUES ('moved', $1)`, raw)
	must(t, err, "insert a moved value")
	if _, err := f.st.VariableGet(f.ctx, "moved"); err == nil {
		t.Error("a sealed value moved to another key opened")
	}
	must(t, f.st.VariableDelete(f.ctx, "region"), "delete")
	wantErr(t, f.st.VariableDelete(f.ctx, "region"), core.ErrNotFound, "delete a deleted variable")
	_, err = f.st.VariableGet(f.ctx, "region")
	wantErr(t, err, core.ErrNotFound, "get a deleted variable")
}
