package dagprocessor

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/postgres"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/secretstest"
)

// Schedulers started together on a fresh PostgreSQL database record the
// same new DAGs, versions and assets at once, each through its own
// connections: every scan succeeds and records no import error (the loser
// of an insert runs its transaction again), one version a DAG.
func TestProcessorsStartingTogetherRecordEachDAGOnce(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	for i := range 12 {
		dag := fmt.Sprintf("dag_id: d%d\nassets: [{name: a%d, uri: \"file:///tmp/a%d\"}]\ntasks:\n  - {task_id: t, operator: noop, outlets: [a%d]}\n", i, i, i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("d%d.yaml", i)), []byte(dag), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var procs []*Processor
	for i := range 4 {
		st, err := postgres.Open(t.Context(), dsn, postgres.Options{Secrets: secretstest.Box(), NoListen: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		if i == 0 {
			if err := st.Migrate(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		procs = append(procs, &Processor{Store: st, Dir: dir, Parser: fmt.Sprint("scheduler-", i),
			Clock: fixedClock{time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}})
	}
	var wg sync.WaitGroup
	errs := make([]error, len(procs))
	for i, p := range procs {
		wg.Go(func() { errs[i] = p.SyncOnce(t.Context()) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("scheduler %d's first scan: %v", i, err)
		}
	}
	st := procs[0].Store.(*sqlstore.Store)
	if ies, err := st.ImportErrorList(t.Context(), &store.ImportErrorListParams{}); err != nil || len(ies) != 0 {
		t.Errorf("import errors after the concurrent scans: %+v, %v; want none", ies, err)
	}
	for i := range 12 {
		if v, err := st.DagVersionLatest(t.Context(), fmt.Sprintf("d%d", i)); err != nil || v.Version != 1 {
			t.Errorf("d%d: latest version %+v, %v; want version 1", i, v, err)
		}
	}
}
