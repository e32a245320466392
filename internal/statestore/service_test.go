package statestore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/statevalue"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

var t0 = time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)

// newService returns a Service over a fresh SQLite store holding run r1 of
// dag d, with task t.
func newService(t *testing.T, cfg statestore.Config) (*statestore.Service, store.Store, *clocktest.Clock) {
	t.Helper()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	clk := clocktest.New(t0)
	vid, _, err := st.DagSync(ctx, &store.DagSyncParams{Spec: core.DAG{DagID: "d", Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}},
		Hash: "h", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: "d", RunID: "r1", RunType: core.RunManual, State: core.RunRunning,
		DagVersionID: vid, Now: t0, TaskInstances: []store.NewTaskInstance{{ID: uuid.NewString(), TaskID: "t",
			MapIndex: -1, MaxTries: 1, State: core.TIRunning}}}); err != nil {
		t.Fatal(err)
	}
	return statestore.New(st, clk, cfg), st, clk
}

var sc = core.TaskScope("d", "r1", "t", -1)

func retention(t *testing.T, s string) statevalue.Retention {
	t.Helper()
	r, err := statevalue.ParseRetention(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// docs/requirements.md#ts-3: expires_at is computed at write time from the retention, the
// default (default_retention_days; 0 = none) or never; changing the default
// later does not touch rows already written.
func TestSetComputesExpiryAtWriteTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, st, _ := newService(t, statestore.Config{DefaultRetentionDays: 30})
	by := core.StateWriter{Kind: core.StateWriterTask, DagID: "d", RunID: "r1", TaskID: "t", MapIndex: -1, TryNumber: 2}
	cases := []struct {
		key, retention string
		want           *time.Time
		never          bool
	}{
		{"six", "6h", ptr(t0.Add(6 * time.Hour)), false},
		{"default", "", ptr(t0.AddDate(0, 0, 30)), false},
		{"forever", "never", nil, true},
	}
	for _, c := range cases {
		e, err := svc.Set(ctx, sc, c.key, []byte(`{"n": 1}`), retention(t, c.retention), by)
		if err != nil {
			t.Fatal(err)
		}
		got, err := svc.Get(ctx, sc, c.key)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []*core.StateEntry{e, got} {
			if !timeEq(x.ExpiresAt, c.want) || x.NeverExpire != c.never || string(x.Value) != `{"n":1}` ||
				x.UpdatedBy.RunID != "r1" || x.UpdatedBy.TryNumber != 2 || !x.UpdatedAt.Equal(t0) {
				t.Errorf("%s: entry %+v, want expires %v never %t", c.key, x, c.want, c.never)
			}
		}
	}
	// default_retention_days = 0: no expiry for new default writes; the row
	// written under 30 days keeps its expiry.
	svc0 := statestore.New(st, clocktest.New(t0), statestore.Config{DefaultRetentionDays: 0})
	if e, err := svc0.Set(ctx, sc, "nodefault", []byte(`1`), statevalue.Retention{}, by); err != nil || e.ExpiresAt != nil || e.NeverExpire {
		t.Errorf("default with 0 days: %+v, %v; want no expiry and no never flag", e, err)
	}
	if e, _ := svc0.Get(ctx, sc, "default"); e == nil || !timeEq(e.ExpiresAt, ptr(t0.AddDate(0, 0, 30))) {
		t.Errorf("changing default_retention_days touched an existing row: %+v", e)
	}
}

// docs/requirements.md#ts-7: max_value_bytes is enforced on the normalized value, with an
// error naming the limit, and the refused write changes nothing.
func TestSetEnforcesMaxValueBytes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, _, _ := newService(t, statestore.Config{MaxValueBytes: 10})
	if _, err := svc.Set(ctx, sc, "k", []byte(`"12345678"`), statevalue.Retention{}, core.UserWriter("")); err != nil {
		t.Fatalf("10 bytes: %v", err)
	}
	// Whitespace does not count: the value is stored compact.
	if _, err := svc.Set(ctx, sc, "k", []byte(`[1,   2,    3]`), statevalue.Retention{}, core.UserWriter("")); err != nil {
		t.Fatalf("7 bytes once compact: %v", err)
	}
	_, err := svc.Set(ctx, sc, "k", []byte(`"123456789"`), statevalue.Retention{}, core.UserWriter(""))
	if !errors.Is(err, core.ErrTooLarge) || !strings.Contains(err.Error(), "11 bytes, over the limit of 10 bytes ([state_store] max_value_bytes)") {
		t.Fatalf("11 bytes: %v", err)
	}
	if e, _ := svc.Get(ctx, sc, "k"); string(e.Value) != "[1,2,3]" {
		t.Errorf("refused write changed the value to %s", e.Value)
	}
}

// docs/requirements.md#ts-2: a missing key is ErrNotFound; delete of an absent key is fine;
// a write to a run that does not exist is ErrNotFound, and so is any access
// to an asset that does not exist.
func TestServiceErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, _, _ := newService(t, statestore.Config{})
	if _, err := svc.Get(ctx, sc, "absent"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("get absent: %v", err)
	}
	if err := svc.Delete(ctx, sc, "absent"); err != nil {
		t.Errorf("delete absent: %v", err)
	}
	other := sc
	other.RunID = "nope"
	if _, err := svc.Set(ctx, other, "k", []byte(`1`), statevalue.Retention{}, core.UserWriter("")); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("set on unknown run: %v", err)
	}
	if _, err := svc.Set(ctx, sc, "", []byte(`1`), statevalue.Retention{}, core.UserWriter("")); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("empty key: %v", err)
	}
	if _, err := svc.Get(ctx, core.AssetScopeByName("a"), "k"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("asset scope of an unknown asset: %v", err)
	}
}

func ptr(t time.Time) *time.Time { return &t }

func timeEq(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}
