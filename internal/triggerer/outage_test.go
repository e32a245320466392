package triggerer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/wait"
	"github.com/weirflow/weir/internal/trigger/builtin"
)

// outage is a store whose next transactions fail as they do while
// PostgreSQL restarts: failures fail before anything commits (the
// database refuses connections), then lost commits commit but answer
// as if the connection broke before the answer came.
type outage struct {
	store.Store
	failures, lost atomic.Int32
}

func (o *outage) WithTx(ctx context.Context, fn func(tx store.Store) error) error {
	if o.failures.Add(-1) >= 0 {
		return fmt.Errorf("begin transaction: %w: connection refused", core.ErrUnavailable)
	}
	err := o.Store.WithTx(ctx, fn)
	if err == nil && o.lost.Add(-1) >= 0 {
		return fmt.Errorf("commit transaction: %w: unexpected EOF", core.ErrUnavailable)
	}
	return err
}

// left fails t if the outage did not meet the code under test.
func (o *outage) left(t *testing.T) {
	t.Helper()
	if f, l := o.failures.Load(), o.lost.Load(); f > 0 || l > 0 {
		t.Errorf("%d failures and %d lost commits left: the outage did not meet the trigger", f, l)
	}
}

// TestTriggerOutlastsADatabaseOutage: a trigger that fires while its
// event cannot be committed commits it once the database is back — its
// waiter resumes with the event, not failed, and not stuck deferred.
func TestTriggerOutlastsADatabaseOutage(t *testing.T) {
	for name, open := range engines() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := &outage{Store: open(t)}
			svc := service.New(service.Config{Store: st})
			id := deferred(t, st, svc, 1, core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"0s"}`)}, time.Hour)[0]
			st.failures.Store(6)
			start(t, st, svc, builtin.Registry(), 0)
			wait.Until(t, 60*time.Second, "the trigger to resume its waiter", func() bool {
				ti, err := st.TaskInstanceGet(t.Context(), id)
				return err == nil && ti.State == core.TIScheduled
			})
			ti, _ := st.TaskInstanceGet(t.Context(), id)
			if ti.NextMethod != "done" || ti.TryNumber != 1 {
				t.Errorf("resumed try: next method %q kwargs %s try %d, want the trigger's event (done) on try 1", ti.NextMethod, ti.NextKwargs, ti.TryNumber)
			}
			st.left(t)
		})
	}
}

// TestStreamAppendOutlastsADatabaseOutage: a stream trigger whose appends
// fail while the database is unavailable, some of them after committing,
// appends each event exactly once, in order, in one run.
func TestStreamAppendOutlastsADatabaseOutage(t *testing.T) {
	for name, open := range engines() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			base, _, reg, p := streamEnv(t, open)
			st := &outage{Store: base}
			svc := service.New(service.Config{Store: st, Triggers: reg})
			openPages(t, svc, "outage", 60, 4, 1000)
			st.failures.Store(3)
			st.lost.Store(4)
			start(t, st, svc, reg, 0)
			wait.Until(t, 60*time.Second, "the stream to close", closed(t, st, "outage"))
			checkStream(t, st, "outage", 60)
			if runs := p.runs(); len(runs) != 1 {
				t.Errorf("the trigger ran %d times (from %v), want once: the outage was outlasted, not restarted", len(runs), runs)
			}
			st.left(t)
		})
	}
}
