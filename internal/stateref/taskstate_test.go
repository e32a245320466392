package stateref_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/stateref"
)

// ownTask is a try's own task state: the token names the instance.
var ownTask = core.StateScope{Kind: core.StateTask}

// wrap returns c's state through the backend st.
func wrap(t *testing.T, c *execclient.Client, st objstore.Store) *stateref.State {
	t.Helper()
	ts, err := stateref.New(c, st)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// bigValue is a JSON string of n bytes' worth of text.
func bigValue(n int) json.RawMessage {
	return json.RawMessage(`"` + strings.Repeat("x", n) + `"`)
}

// docs/requirements.md#be-2: a value larger than max_value_bytes round-trips through the
// object store; the database row holds only the reference object, the
// object store the value; a later try of the same task instance reads the
// same object; a second set writes a new object and the replaced one goes
// with the sweep, so each key has one object.
func TestLargeValueRoundTrip(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			c := e.mappedRun(t, "r1", 1)[0]
			url := b.url(t)
			st := openStore(t, url)
			ts := wrap(t, c, st)
			big := bigValue(20 * maxValueBytes)

			// Without the backend the server refuses the value.
			if err := c.StateSet(ctx, ownTask, "big", big, ""); !errors.Is(err, core.ErrTooLarge) {
				t.Fatalf("set of %d bytes without the backend: %v, want too large", len(big), err)
			}
			if err := ts.StateSet(ctx, ownTask, "big", big, "never"); err != nil {
				t.Fatalf("set through the backend: %v", err)
			}
			if err := ts.StateSet(ctx, ownTask, "small", json.RawMessage(`{"page": 7}`), ""); err != nil {
				t.Fatal(err)
			}
			rows := e.rows(t)
			ref, small := refIn(t, rows["r1/t/0/big"]), refIn(t, rows["r1/t/0/small"])
			if !strings.HasPrefix(ref, "task/d/r1/t/0/big/") || !strings.HasPrefix(small, "task/d/r1/t/0/small/") {
				t.Errorf("references = %s, %s; want task/d/r1/t/0/<key>/<id>", ref, small)
			}
			if obj, err := st.Get(ctx, ref); err != nil || !bytes.Equal(obj, big) {
				t.Errorf("object %s = %d bytes (%v), want the %d-byte value", ref, len(obj), err, len(big))
			}
			if keys := list(t, st, ""); len(keys) != 2 {
				t.Errorf("objects = %v, want one per key", keys)
			}

			// Another accessor of the same task instance over a store opened
			// anew (as a retry on another worker has) reads both values back.
			ts2 := wrap(t, c, openStore(t, url))
			if got, err := ts2.StateGet(ctx, ownTask, "big"); err != nil || !bytes.Equal(got, big) {
				t.Errorf("get big = %d bytes, %v; want the %d-byte value", len(got), err, len(big))
			}
			if got, err := ts2.StateGet(ctx, ownTask, "small"); err != nil || string(got) != `{"page":7}` {
				t.Errorf("get small = %s, %v", got, err)
			}
			if err := ts2.StateSet(ctx, ownTask, "small", json.RawMessage(`8`), ""); err != nil {
				t.Fatal(err)
			}
			if got, err := ts.StateGet(ctx, ownTask, "small"); err != nil || string(got) != "8" {
				t.Errorf("get small after a second set = %s, %v", got, err)
			}
			if n := e.mustSweep(t, st); n != 1 {
				t.Errorf("sweep after an overwrite deleted %d objects, want the replaced one", n)
			}
			if keys := list(t, st, ""); len(keys) != 2 || slices.Contains(keys, small) {
				t.Errorf("after the sweep: objects %v, want two, without the replaced %s", keys, small)
			}
			if _, err := ts.StateGet(ctx, ownTask, "absent"); !errors.Is(err, core.ErrNotFound) {
				t.Errorf("get of an absent key: %v, want not found", err)
			}
		})
	}
}

// docs/state-backends.md#sweeping: whatever removes a row holding a
// reference — the try's delete and clear (one map index, then all),
// retention cleanup, an admin's delete, the run's deletion — its object is
// deleted by the next sweep, on a directory and on SeaweedFS; a finished
// try's set is refused before it writes anything.
func TestSweepRemovedObjects(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newEnv(t)
			cs := e.mappedRun(t, "r1", 3)
			st := openStore(t, b.url(t))
			ts := make([]*stateref.State, len(cs))
			for i, c := range cs {
				ts[i] = wrap(t, c, st)
				for _, k := range []string{"a", "b"} {
					if err := ts[i].StateSet(ctx, ownTask, k, bigValue(2*maxValueBytes), "1h"); err != nil {
						t.Fatal(err)
					}
				}
			}
			objects := func() int { return len(list(t, st, "")) }
			if n := objects(); n != 6 {
				t.Fatalf("%d objects, want 6", n)
			}
			if err := ts[0].StateDelete(ctx, ownTask, "a"); err != nil {
				t.Fatal(err)
			}
			if n := objects(); n != 6 {
				t.Errorf("objects right after the delete = %d, want still 6 (the sweep deletes them)", n)
			}
			if err := ts[0].StateClear(ctx, ownTask, false); err != nil {
				t.Fatal(err)
			}
			if n := e.mustSweep(t, st); n != 2 || objects() != 4 ||
				len(list(t, st, "task/d/r1/t/0/")) != 0 {
				t.Errorf("sweep after clearing map index 0 deleted %d, left %v; want those of 1 and 2 only", n, list(t, st, ""))
			}

			// docs/requirements.md#sec-3: a finished try's set is refused
			// before it writes an object.
			if _, err := cs[1].SetState(ctx, cs[1].Identity.TIID, core.TISuccess); err != nil {
				t.Fatal(err)
			}
			if err := ts[1].StateSet(ctx, ownTask, "k", json.RawMessage(`"late"`), ""); !errors.Is(err, core.ErrForbidden) {
				t.Fatalf("set by a finished try: %v, want forbidden", err)
			}
			if n := objects(); n != 4 {
				t.Errorf("objects after a refused set: %v, want the 4 there were", list(t, st, ""))
			}

			// An admin's delete, then retention cleanup of what expired.
			if err := e.states.AdminDelete(ctx, core.Actor{Name: "ada", Role: core.RoleOp}, core.TaskScope("d", "r1", "t", 1), "a"); err != nil {
				t.Fatal(err)
			}
			e.Clock.Advance(2 * time.Hour)
			if _, err := e.states.Cleanup(ctx, false); err != nil {
				t.Fatal(err)
			}
			if rows := e.rows(t); len(rows) != 0 {
				t.Fatalf("rows after cleanup: %v, want none", rows)
			}
			if n := e.mustSweep(t, st); n != 4 || objects() != 0 {
				t.Errorf("sweep after an admin delete and cleanup deleted %d, left %v; want every object gone", n, list(t, st, ""))
			}

			// The run's deletion takes its rows; the sweep their objects.
			cs2 := e.mappedRun(t, "r2", 1)
			if err := wrap(t, cs2[0], st).StateSet(ctx, ownTask, "k", json.RawMessage(`1`), "never"); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Store.DB().ExecContext(ctx, `DELETE FROM dag_run WHERE run_id = 'r2'`); err != nil {
				t.Fatal(err)
			}
			if n := e.mustSweep(t, st); n != 1 || objects() != 0 {
				t.Errorf("sweep after the run's deletion deleted %d, left %v", n, list(t, st, ""))
			}

		})
	}
}

// docs/state-backends.md#sweeping: an object the sweep cannot delete stays
// claimed and is deleted by a later sweep once its lease lapses; an object
// whose reference was never stored (a worker died between the two) is
// deleted once its reservation's grace ends, and its reference can no
// longer be stored.
func TestSweepRetriesAndGrace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	c := e.mappedRun(t, "r1", 1)[0]
	root := filepath.Join(t.TempDir(), "state")
	st := openStore(t, "file://"+root)
	ts := wrap(t, c, st)
	if err := ts.StateSet(ctx, ownTask, "k", bigValue(4*maxValueBytes), ""); err != nil {
		t.Fatal(err)
	}
	ref := refIn(t, e.rows(t)["r1/t/0/k"])
	if err := ts.StateDelete(ctx, ownTask, "k"); err != nil {
		t.Fatal(err)
	}
	// A worker reserved a reference and wrote the object, then died.
	res, err := c.StateObjectReserve(ctx, ownTask, "orphan")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, res.Ref, []byte(`1`)); err != nil {
		t.Fatal(err)
	}
	unblock := blockDeletes(t, filepath.Join(root, "task", "d", "r1", "t", "0", "k"))
	if n, err := e.sweep(t, st); err == nil || n != 0 {
		t.Fatalf("sweep with a failing object delete = %d, %v; want an error and nothing reported", n, err)
	}
	unblock()
	if n := e.mustSweep(t, st); n != 0 {
		t.Errorf("sweep within the lease deleted %d, want 0 (the reference is still claimed)", n)
	}
	e.Clock.Advance(11 * time.Minute)
	if n := e.mustSweep(t, st); n != 1 {
		t.Errorf("sweep after the lease deleted %d, want 1", n)
	}
	if _, err := st.Get(ctx, ref); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("object %s after the sweep: %v, want gone", ref, err)
	}

	if n := e.mustSweep(t, st); n != 0 {
		t.Errorf("sweep within the grace deleted %d, want 0", n)
	}
	e.Clock.Advance(50 * time.Minute)
	if n := e.mustSweep(t, st); n != 1 {
		t.Errorf("sweep after the grace deleted %d, want the orphan", n)
	}
	// (The try's token has expired by now: the server's store refuses the
	// swept reference, as the conformance suite shows.)
	if keys := list(t, st, ""); len(keys) != 0 {
		t.Errorf("objects left: %v", keys)
	}
}
