package dagprocessor

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/testutil/postgrestest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

// onEachEngine runs fn as a subtest with a processor on a fresh SQLite
// store and one on a fresh PostgreSQL database.
func onEachEngine(t *testing.T, fn func(t *testing.T, p *Processor, dir string)) {
	t.Helper()
	for name, open := range map[string]func(testing.TB) *sqlstore.Store{"sqlite": sqlitetest.Open, "postgres": postgrestest.Open} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			fn(t, &Processor{Store: open(t), Dir: dir, Clock: fixedClock{time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}}, dir)
		})
	}
}

// A DAG (and its asset) deactivated by another process while its file is
// unchanged is active again after the next scan, and a DAG another process
// recorded that the folder does not define is deactivated: the flags follow
// the folder on every scan (issue 12: a CLI command had wiped the DAGs).
func TestScanReconcilesActiveFlags(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, p *Processor, dir string) {
		ctx := t.Context()
		write(t, filepath.Join(dir, "a.yaml"), "dag_id: alpha\nassets:\n  - name: orders\ntasks:\n  - task_id: t\n    operator: noop\n    outlets: [orders]\n")
		write(t, filepath.Join(dir, "b.yaml"), dagYAML("beta", "echo b"))
		syncOnce(t, p)
		st := storeOf(p)

		// Another process with an empty folder deactivates everything, and
		// records a DAG of its own.
		if err := st.DagDeactivateMissing(ctx, &store.DagDeactivateParams{}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.AssetDeactivateOrphans(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		stray := core.DAG{DagID: "stray", FileLoc: "/elsewhere/stray.yaml", Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}}
		if _, _, err := st.DagSync(ctx, &store.DagSyncParams{Spec: stray, Hash: "x", Now: time.Now()}); err != nil {
			t.Fatal(err)
		}

		syncOnce(t, p)
		for id, want := range map[string]bool{"alpha": true, "beta": true, "stray": false} {
			if d := dagState(t, p, id); d == nil || d.IsActive != want {
				t.Errorf("dag %s after one scan: %+v, want active=%v", id, d, want)
			}
		}
		a, err := st.AssetGetByName(ctx, "orders")
		if err != nil {
			t.Fatal(err)
		}
		if !a.Active {
			t.Errorf("asset orders is still inactive after the scan that reactivated its DAG")
		}
	})
}

// RecordOne records one DAG and touches nothing else: the other DAGs stay
// active although it ran with a folder that lacks them, and a DAG no file
// defines is an error naming the folder.
func TestRecordOneTouchesNothingElse(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, p *Processor, dir string) {
		write(t, filepath.Join(dir, "a.yaml"), dagYAML("alpha", "echo a"))
		write(t, filepath.Join(dir, "b.yaml"), dagYAML("beta", "echo b"))
		syncOnce(t, p)

		other := t.TempDir()
		write(t, filepath.Join(other, "c.yaml"), dagYAML("gamma", "echo c"))
		write(t, filepath.Join(other, "broken.yaml"), "dag_id: [\n")
		cli := &Processor{Store: p.Store, Dir: other}
		if d, err := cli.RecordOne(t.Context(), "gamma"); err != nil {
			t.Fatal(err)
		} else if d.DagID != "gamma" {
			t.Errorf("RecordOne(gamma) returned dag %s", d.DagID)
		}
		for _, id := range []string{"alpha", "beta", "gamma"} {
			if d := dagState(t, p, id); d == nil || !d.IsActive {
				t.Errorf("dag %s after RecordOne(gamma): %+v, want active", id, d)
			}
		}
		if errs := importErrors(t, p); len(errs) != 0 {
			t.Errorf("RecordOne recorded import errors: %v", errs)
		}
		// The DAG may be in a file that fails to load: the error lists them
		// (a test records no import errors to look up).
		_, err := cli.RecordOne(t.Context(), "alpha")
		if !errors.Is(err, core.ErrNotFound) || !strings.Contains(err.Error(), other) ||
			!strings.Contains(err.Error(), "1 file(s) there fail to load:\n  "+filepath.Join(other, "broken.yaml")+":1:") {
			t.Errorf("RecordOne of a DAG the folder lacks: %v, want not found naming %s and broken.yaml's error", err, other)
		}
	})
}
