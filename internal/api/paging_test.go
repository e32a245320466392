package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/testutil/sqlcount"
)

// bigLists is an API server over a store holding the DAG "big" whose run
// "r" has n task instances (one mapped task), and the asset "big" with n
// events, for paging tests and benchmarks.
type bigLists struct {
	tb       testing.TB
	st       *sqlstore.Store
	srv      *httptest.Server
	token    string
	assetID  int64
	firstEvt int64 // id of the asset's oldest event
}

// newBigLists fills st (written fast: one multi-row run insert and one
// INSERT ... SELECT of the events) and serves it.
func newBigLists(tb testing.TB, st *sqlstore.Store, n int) *bigLists {
	tb.Helper()
	ctx := tb.Context()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	spec := core.DAG{DagID: "big", Assets: []core.Asset{{Name: "big", URI: "s3://big"}},
		Tasks: []core.Task{{TaskID: "m", Operator: "noop", Outlets: []core.AssetRef{{Name: "big"}}}}}
	must := func(err error, what string) {
		tb.Helper()
		if err != nil {
			tb.Fatalf("%s: %v", what, err)
		}
	}
	version, _, err := st.DagSync(ctx, &store.DagSyncParams{Spec: spec, Hash: "big", Now: now})
	must(err, "sync dag")
	must(st.AssetSync(ctx, &store.AssetSyncParams{Spec: &spec, Now: now}), "sync asset")
	tis := make([]store.NewTaskInstance, n)
	for i := range tis {
		tis[i] = store.NewTaskInstance{TaskID: "m", MapIndex: i, MaxTries: 1, Operator: "noop", State: core.TISuccess}
	}
	_, err = st.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: "big", RunID: "r", RunType: core.RunManual,
		State: core.RunRunning, DagVersionID: version, Now: now, TaskInstances: tis})
	must(err, "create run")
	a, err := st.AssetGetByName(ctx, "big")
	must(err, "get asset")
	_, err = st.DB().ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $2)
		INSERT INTO asset_event (asset_id, extra, source_kind, timestamp)
		SELECT $1, '{}', 'api', CAST($3 AS BIGINT) + i FROM n`, a.ID, n, now.UnixMicro())
	must(err, "insert events")
	b := &bigLists{tb: tb, st: st, assetID: a.ID}
	must(st.DB().QueryRowContext(ctx, `SELECT MIN(id) FROM asset_event WHERE asset_id = $1`, a.ID).Scan(&b.firstEvt), "first event")
	if st.Dialect() == "postgres" { // as autovacuum leaves a real server: statistics and a visibility map
		_, err = st.DB().ExecContext(ctx, `VACUUM ANALYZE`)
		must(err, "vacuum")
	}
	must(st.UserUpsert(ctx, &core.User{Username: "viewer", Role: string(core.RoleViewer), CreatedAt: now}), "user")
	secret, hash := auth.NewToken()
	must(st.APITokenCreate(ctx, &core.APIToken{ID: "t", Name: "t", Username: "viewer", Hash: hash, CreatedAt: now}), "token")
	b.token = secret
	h, err := api.NewHandler(api.Config{Store: st, SecretKey: []byte("0123456789abcdef0123456789abcdef")})
	must(err, "handler")
	b.srv = httptest.NewServer(h)
	tb.Cleanup(b.srv.Close)
	return b
}

// get fetches path and decodes the collection's total and page length.
func (b *bigLists) get(path string) (total, page int) {
	b.tb.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, b.srv.URL+path, nil)
	if err != nil {
		b.tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := b.srv.Client().Do(req)
	if err != nil {
		b.tb.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.tb.Fatalf("GET %s: %d %s %v", path, resp.StatusCode, body, err)
	}
	var c map[string]json.RawMessage
	if err := json.Unmarshal(body, &c); err != nil {
		b.tb.Fatalf("GET %s: %v", path, err)
	}
	if err := json.Unmarshal(c["total_entries"], &total); err != nil {
		b.tb.Fatalf("GET %s: total_entries: %v", path, err)
	}
	for k, v := range c {
		if k != "total_entries" {
			var items []json.RawMessage
			if err := json.Unmarshal(v, &items); err != nil {
				b.tb.Fatalf("GET %s: %s: %v", path, k, err)
			}
			page = len(items)
		}
	}
	return total, page
}

// pagePaths are the lists the paging proof and benchmark read: page p
// (1-based, 50 a page) of the DAG's task instances across its runs, and of
// the asset's events by offset and by keyset cursor.
func (b *bigLists) pagePaths(p int) map[string]string {
	off := (p - 1) * 50
	return map[string]string{
		"TaskInstancesOfDag":     fmt.Sprintf("/api/v2/dags/big/dagRuns/~/taskInstances?limit=50&offset=%d", off),
		"AssetEventsByOffset":    fmt.Sprintf("/api/v2/assets/events?asset_id=%d&limit=50&offset=%d", b.assetID, off),
		"AssetEventsByKeyset":    fmt.Sprintf("/api/v2/assets/events?asset_id=%d&limit=50&after_id=%d", b.assetID, b.firstEvt+int64(off)-1),
		"TaskInstancesOfRun":     fmt.Sprintf("/api/v2/dags/big/dagRuns/r/taskInstances?limit=50&offset=%d", off),
		"AssetEventsNewestFirst": fmt.Sprintf("/api/v2/assets/events?asset_id=%d&limit=50&offset=%d&order_by=-id", b.assetID, off),
	}
}

// TestListsReadOnlyThePage: page 1 (limit 50) of a DAG's 100,000 task
// instances, and of an asset's 100,000 events, reads 50 rows and one count
// from the database; every other statement (the token, its user, the DAG or
// run the path names) reads at most one row.
func TestListsReadOnlyThePage(t *testing.T) {
	const n = 100_000
	st, counter := sqlcount.OpenSQLite(t, filepath.Join(t.TempDir(), "weir.db"))
	b := newBigLists(t, st, n)
	for name, path := range b.pagePaths(1) {
		counter.Reset()
		total, page := b.get(path)
		if total != n || page != 50 {
			t.Errorf("%s: total_entries %d, page of %d; want %d and 50", name, total, page, n)
		}
		counts, listed := 0, 0
		for _, s := range counter.Stats() {
			switch {
			case strings.HasPrefix(s.Query, "SELECT COUNT(*)"):
				counts++
			case s.Rows > 1:
				listed++
				if s.Rows > 51 {
					t.Errorf("%s: one statement read %d rows, want at most 51: %s", name, s.Rows, s.Query)
				}
			}
		}
		if counts != 1 || listed != 1 {
			t.Errorf("%s: %d count queries and %d statements reading more than one row, want 1 and 1: %+v",
				name, counts, listed, counter.Stats())
		}
	}
}
