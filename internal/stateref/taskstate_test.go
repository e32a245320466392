package stateref_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/stateref"
)

// ownTask is a try's own task state: the token names the instance.
var ownTask = core.StateScope{Kind: core.StateTask}

// wrap returns c's state through the backend st, logging into log.
func wrap(t *testing.T, c *execclient.Client, st objstore.Store, log *bytes.Buffer) *stateref.State {
	t.Helper()
	var l *slog.Logger
	if log != nil {
		l = slog.New(slog.NewTextHandler(log, nil))
	}
	ts, err := stateref.New(c, st, l)
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
// object store the value; references are deterministic (a later try of
// the same task instance reads the same object) and one per key.
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
			ts := wrap(t, c, st, nil)
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
			scope := execclient.TaskIdentity{DagID: "d", RunID: "r1", TaskID: "t", MapIndex: 0}
			ref := stateref.TaskRef(scope, "big")
			if ref != "task/d/r1/t/0/big" || ts.Ref(ownTask, "big") != ref {
				t.Errorf("reference of big = %q (accessor %q), want task/d/r1/t/0/big", ref, ts.Ref(ownTask, "big"))
			}
			rows := e.rows(t)
			if got, want := rows["r1/t/0/big"], `{"__weir_state_ref__":"task/d/r1/t/0/big"}`; got != want {
				t.Errorf("database row of big = %.80s, want only the reference %s", got, want)
			}
			if got, want := rows["r1/t/0/small"], `{"__weir_state_ref__":"task/d/r1/t/0/small"}`; got != want {
				t.Errorf("database row of small = %s, want %s", got, want)
			}
			if obj, err := st.Get(ctx, ref); err != nil || !bytes.Equal(obj, big) {
				t.Errorf("object %s = %d bytes (%v), want the %d-byte value", ref, len(obj), err, len(big))
			}
			if keys := list(t, st, ""); !slices.Equal(keys, []string{"task/d/r1/t/0/big", "task/d/r1/t/0/small"}) {
				t.Errorf("objects = %v, want one per key", keys)
			}

			// Another accessor of the same task instance over a store opened
			// anew (as a retry on another worker has) reads both values
			// back; a second set overwrites the same object.
			ts2 := wrap(t, c, openStore(t, url), nil)
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
			if keys := list(t, st, ""); len(keys) != 2 {
				t.Errorf("after setting small again: objects %v, want still two", keys)
			}
			if _, err := ts.StateGet(ctx, ownTask, "absent"); !errors.Is(err, core.ErrNotFound) {
				t.Errorf("get of an absent key: %v, want not found", err)
			}
		})
	}
}

// docs/requirements.md#be-2: delete removes the database row first, then the object. When
// the row cannot be deleted (the try has finished) the object stays; when
// the object cannot be deleted the key is gone anyway, the failure is
// logged, and the next set of the key overwrites the orphaned object (the
// reference is the same), so no second object appears.
func TestDeleteOrderAndRepair(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	cs := e.mappedRun(t, "r1", 2)
	root := filepath.Join(t.TempDir(), "state")
	st := openStore(t, "file://"+root)
	var log bytes.Buffer
	ts := wrap(t, cs[0], st, &log)
	big := bigValue(4 * maxValueBytes)
	if err := ts.StateSet(ctx, ownTask, "k", big, ""); err != nil {
		t.Fatal(err)
	}
	ref := ts.Ref(ownTask, "k")

	// The object's directory refuses deletes: the row goes, the object
	// stays, a warning names the reference.
	unblock := blockDeletes(t, filepath.Join(root, "task", "d", "r1", "t", "0"))
	if err := ts.StateDelete(ctx, ownTask, "k"); err != nil {
		t.Fatalf("delete with a failing object delete: %v, want nil (the row is gone)", err)
	}
	if _, ok := e.rows(t)["r1/t/0/k"]; ok {
		t.Error("the row of k is still there after delete")
	}
	if _, err := st.Get(ctx, ref); err != nil {
		t.Errorf("the object was expected to survive the failed delete: %v", err)
	}
	if !strings.Contains(log.String(), "could not be") || !strings.Contains(log.String(), ref) {
		t.Errorf("log does not report the failed object delete of %s:\n%s", ref, log.String())
	}
	if _, err := ts.StateGet(ctx, ownTask, "k"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("get after delete: %v, want not found (the orphan is not read)", err)
	}

	// The next set of k repairs it: same reference, the orphan overwritten.
	unblock()
	if err := ts.StateSet(ctx, ownTask, "k", json.RawMessage(`"v2"`), ""); err != nil {
		t.Fatal(err)
	}
	if keys := list(t, st, ""); !slices.Equal(keys, []string{ref}) {
		t.Errorf("objects after the repairing set = %v, want only %s", keys, ref)
	}
	if got, err := ts.StateGet(ctx, ownTask, "k"); err != nil || string(got) != `"v2"` {
		t.Errorf("get after the repairing set = %s, %v", got, err)
	}

	// Row first: once the try has finished the API refuses the delete, and
	// the object is left alone.
	if _, err := cs[0].SetState(ctx, cs[0].Identity.TIID, core.TISuccess); err != nil {
		t.Fatal(err)
	}
	if err := ts.StateDelete(ctx, ownTask, "k"); err == nil {
		t.Fatal("delete by a finished try succeeded")
	}
	if _, err := st.Get(ctx, ref); err != nil {
		t.Errorf("a refused row delete removed the object: %v", err)
	}
	if _, ok := e.rows(t)["r1/t/0/k"]; !ok {
		t.Error("the row of k is gone after a refused delete")
	}
	// docs/requirements.md#sec-3: the finished try's set is refused before it can overwrite
	// the object the row points to.
	if err := ts.StateSet(ctx, ownTask, "k", json.RawMessage(`"overwritten"`), ""); !errors.Is(err, core.ErrForbidden) {
		t.Fatalf("set by a finished try: %v, want forbidden", err)
	}
	if got, err := st.Get(ctx, ref); err != nil || string(got) != `"v2"` {
		t.Errorf("the object after a refused set = %s, %v; want the value before it, \"v2\"", got, err)
	}
}

// docs/requirements.md#be-2: clear removes the rows, then every object of the scope; with
// all map indices, those of every mapped instance of the task.
func TestClearAllMapIndices(t *testing.T) {
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
				ts[i] = wrap(t, c, st, nil)
				for _, k := range []string{"a", "b"} {
					if err := ts[i].StateSet(ctx, ownTask, k, bigValue(2*maxValueBytes), ""); err != nil {
						t.Fatal(err)
					}
				}
			}
			if n := len(list(t, st, "")); n != 6 {
				t.Fatalf("%d objects, want 6", n)
			}
			if err := ts[0].StateClear(ctx, ownTask, false); err != nil {
				t.Fatal(err)
			}
			if keys := list(t, st, ""); len(keys) != 4 || slices.ContainsFunc(keys, func(k string) bool {
				return strings.HasPrefix(k, "task/d/r1/t/0/")
			}) {
				t.Errorf("after clearing map index 0: objects %v, want those of 1 and 2 only", keys)
			}
			if rows := e.rows(t); len(rows) != 4 {
				t.Errorf("after clearing map index 0: rows %v", rows)
			}
			if err := ts[1].StateClear(ctx, ownTask, true); err != nil {
				t.Fatal(err)
			}
			if keys := list(t, st, ""); len(keys) != 0 {
				t.Errorf("after clearing all map indices: objects %v remain", keys)
			}
			if rows := e.rows(t); len(rows) != 0 {
				t.Errorf("after clearing all map indices: rows %v remain", rows)
			}
		})
	}
}
