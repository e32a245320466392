package api_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"

	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/postgres"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

// TestMain stops the PostgreSQL cluster BenchmarkListPage may start.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// BenchmarkListPage times GET of page 1 and page 1,000 (limit 50) of a
// DAG's task instances (across its runs, and of its one run) and of an
// asset's events (by offset, and by the after_id cursor), through the REST
// handler on loopback HTTP, with 100 and with 100,000 rows in the list, on
// SQLite and PostgreSQL. StoreList times the store's page read alone and
// StoreCount the total_entries query alone. docs/benchmarks.md records the
// results:
//
//	go test -run '^$' -bench BenchmarkListPage -benchtime 100x ./internal/api
func BenchmarkListPage(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		for _, rows := range []int{100, 100_000} {
			lists := newBigLists(b, openEngine(b, engine), rows)
			for _, page := range []int{1, 1000} {
				paths := lists.pagePaths(page)
				for _, name := range []string{"TaskInstancesOfDag", "TaskInstancesOfRun", "AssetEventsByOffset", "AssetEventsByKeyset"} {
					b.Run(fmt.Sprintf("%s/REST/%s/rows=%d/page=%d", engine, name, rows, page), func(b *testing.B) {
						for b.Loop() {
							lists.get(paths[name])
						}
					})
				}
				reads := lists.storeReads(page)
				for _, name := range slices.Sorted(maps.Keys(reads)) {
					b.Run(fmt.Sprintf("%s/%s/rows=%d/page=%d", engine, name, rows, page), func(b *testing.B) {
						for b.Loop() {
							if _, err := reads[name](b.Context()); err != nil {
								b.Fatal(err)
							}
						}
					})
				}
			}
		}
	}
}

// storeReads are the store calls behind page p of the DAG's task instances
// and of the asset's events: the page alone (StoreList) and the total alone
// (StoreCount, with page 1: it is the same for every page).
func (b *bigLists) storeReads(p int) map[string]func(context.Context) (int, error) {
	pg := store.Page{Limit: 50, Offset: (p - 1) * 50}
	dagTIs := &store.TaskInstanceListParams{DagID: "big", Page: pg}
	events := &store.AssetEventListParams{AssetID: b.assetID, Page: pg}
	keyset := &store.AssetEventListParams{AssetID: b.assetID, Page: store.Page{Limit: 50},
		Cursor: store.Cursor{AfterID: b.firstEvt + int64(pg.Offset) - 1}}
	reads := map[string]func(context.Context) (int, error){
		"StoreList/TaskInstancesOfDag": func(ctx context.Context) (int, error) {
			l, err := b.st.TaskInstanceList(ctx, dagTIs)
			return len(l), err
		},
		"StoreList/AssetEventsByOffset": func(ctx context.Context) (int, error) {
			l, err := b.st.AssetEventList(ctx, events)
			return len(l), err
		},
		"StoreList/AssetEventsByKeyset": func(ctx context.Context) (int, error) {
			l, err := b.st.AssetEventList(ctx, keyset)
			return len(l), err
		},
	}
	if p == 1 {
		reads["StoreCount/TaskInstancesOfDag"] = func(ctx context.Context) (int, error) { return b.st.TaskInstanceCount(ctx, dagTIs) }
		reads["StoreCount/AssetEvents"] = func(ctx context.Context) (int, error) { return b.st.AssetEventCount(ctx, events) }
	}
	return reads
}

// openEngine opens a fresh, migrated store on engine.
func openEngine(b *testing.B, engine string) *sqlstore.Store {
	if engine == "sqlite" {
		return sqlitetest.Open(b)
	}
	st, err := postgres.Open(b.Context(), pgtest.DSN(b), postgres.Options{NoListen: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(b.Context()); err != nil {
		b.Fatal(err)
	}
	return st
}
