package storetest

import (
	"database/sql"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/stateobj"
	"github.com/weirflow/weir/internal/store"
)

// testStateObjects: docs/state-backends.md#sweeping. A write through the
// worker-side backend consumes its reservation with the row (or is
// refused, changing nothing); every way a row holding a reference goes —
// overwrite, delete, cleanup, a deleted run or asset — hands its object to
// the sweep; an unused reservation becomes due after its grace; claims
// lease references and done forgets them.
func testStateObjects(t *testing.T, f *fixture) {
	runStateKits(t, f, func(t *testing.T, f *fixture, k stateKit) {
		a, _, _ := k.scopes(f)
		set := func(key, ref string) error {
			return f.st.StateSet(f.ctx, &store.StateSetParams{Scope: a, Key: key, Value: stateobj.Encode(ref), Now: f.now,
				By: k.writer, Object: ref})
		}
		reserve := func(key string) string {
			ref := stateobj.New(a, key)
			must(t, f.st.StateObjectReserve(f.ctx, ref, f.at(time.Hour)), "reserve")
			return ref
		}
		claim := func(at time.Duration) []string {
			refs, err := f.st.StateObjectClaim(f.ctx, &store.StateObjectClaimParams{Now: f.at(at), Limit: 100, Lease: time.Minute})
			must(t, err, "claim")
			slices.Sort(refs)
			return refs
		}

		r1 := reserve("k")
		must(t, set("k", r1), "set with a reservation")
		must(t, set("k", r1), "the same write again (a retry)")
		if got := claim(2 * time.Hour); len(got) != 0 {
			t.Fatalf("due after a stored write: %v, want none (the reservation was consumed)", got)
		}
		if err := set("k", stateobj.New(a, "k")); !errors.Is(err, core.ErrConflict) {
			t.Fatalf("set without a reservation: %v, want a conflict", err)
		}
		if e, err := f.st.StateGet(f.ctx, a, "k"); err != nil || string(e.Value) != string(stateobj.Encode(r1)) {
			t.Fatalf("after the refused set: %v, %v; want the first reference still", e, err)
		}

		// Overwritten: the old object is due at once.
		r2 := reserve("k")
		must(t, set("k", r2), "overwrite")
		if got := claim(0); !slices.Equal(got, []string{r1}) {
			t.Fatalf("due after an overwrite: %v, want [%s]", got, r1)
		}
		if got := claim(0); len(got) != 0 {
			t.Errorf("claimed again within the lease: %v", got)
		}
		if got := claim(2 * time.Minute); !slices.Equal(got, []string{r1}) {
			t.Errorf("after the lease lapsed: %v, want [%s] again", got, r1)
		}
		must(t, f.st.StateObjectDone(f.ctx, []string{r1}), "done")

		// A reservation never used is due after its grace, and a claimed
		// one can no longer be used.
		r3 := reserve("other")
		if got := claim(time.Hour + time.Second); !slices.Equal(got, []string{r3}) {
			t.Fatalf("due after the grace: %v, want [%s]", got, r3)
		}
		if err := set("other", r3); !errors.Is(err, core.ErrConflict) {
			t.Errorf("set with a reservation being swept: %v, want a conflict", err)
		}
		must(t, f.st.StateObjectDone(f.ctx, []string{r3}), "done")

		// Deleted by key, by cleanup, with the run or asset: due at once.
		n, err := f.st.StateDelete(f.ctx, &store.StateDeleteParams{Scope: a, Key: "k"})
		must(t, err, "delete")
		if n != 1 {
			t.Fatalf("deleted %d rows, want 1", n)
		}
		r4 := reserve("k")
		must(t, set("k", r4), "set again")
		f.setState(a, "plain", `{"rows": 1}`, k.writer, nil, false) // not a reference: nothing to sweep
		db, ok := f.st.(interface{ DB() *sql.DB })
		if !ok {
			t.Fatalf("store %T has no DB() to delete a run or asset row with", f.st)
		}
		cascade := `DELETE FROM dag_run WHERE dag_id = $1 AND run_id = $2`
		args := []any{a.DagID, a.RunID}
		if k.kind == core.StateAsset {
			cascade, args = `DELETE FROM asset WHERE id = $1`, []any{a.AssetID}
		}
		if _, err := db.DB().ExecContext(f.ctx, cascade, args...); err != nil {
			t.Fatalf("delete the scope's row: %v", err)
		}
		want := []string{r2, r4}
		slices.Sort(want)
		if got := claim(0); !slices.Equal(got, want) {
			t.Fatalf("due after a delete and the scope's removal: %v, want %v", got, want)
		}
		must(t, f.st.StateObjectDone(f.ctx, want), "done")
		if n, err := f.st.StateObjectPending(f.ctx); err != nil || n != 0 {
			t.Errorf("pending after every sweep = %d, %v; want 0", n, err)
		}
	})
}
