package dagprocessor

import (
	"path/filepath"
	"testing"
)

// A DAG deleted (weir dags delete) while its file is still in the folder
// comes back at the next scan, as in Airflow: active, with a new first
// version, whatever the processor remembered of it.
func TestDeletedDagReappearsFromItsFile(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, p *Processor, dir string) {
		write(t, filepath.Join(dir, "a.yaml"), dagYAML("alpha", "echo a"))
		syncOnce(t, p)
		st := storeOf(p)
		if err := st.DagDelete(t.Context(), "alpha"); err != nil {
			t.Fatal(err)
		}
		if d := dagState(t, p, "alpha"); d != nil {
			t.Fatalf("alpha after delete: %+v", d)
		}
		syncOnce(t, p)
		d := dagState(t, p, "alpha")
		if d == nil || !d.IsActive {
			t.Fatalf("alpha after the next scan: %+v, want recorded again and active", d)
		}
		v, err := st.DagVersionLatest(t.Context(), "alpha")
		if err != nil || v.Version != 1 {
			t.Errorf("alpha's version after it came back: %+v (%v), want version 1", v, err)
		}
	})
}
