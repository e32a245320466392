package triggerer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/logstore"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/postgres"
	"github.com/weirflow/weir/internal/tasklog"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/secretstest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
	"github.com/weirflow/weir/internal/testutil/wait"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/builtin"
	"github.com/weirflow/weir/internal/triggerer"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func engines() map[string]func(t testing.TB) store.Store {
	return map[string]func(t testing.TB) store.Store{
		"sqlite": func(t testing.TB) store.Store { return sqlitetest.Open(t) },
		"postgres": func(t testing.TB) store.Store {
			st, err := postgres.Open(t.Context(), pgtest.DSN(t), postgres.Options{Secrets: secretstest.Box()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			if err := st.Migrate(t.Context()); err != nil {
				t.Fatal(err)
			}
			return st
		},
	}
}

// deferred creates a run of n tasks and defers each (from none) on spec.
func deferred(t testing.TB, st store.Store, svc *service.Service, n int, spec core.TriggerSpec, timeout time.Duration) []string {
	t.Helper()
	ctx := t.Context()
	var tasks []core.Task
	var seed []store.NewTaskInstance
	for i := range n {
		id := fmt.Sprintf("t%03d", i)
		tasks = append(tasks, core.Task{TaskID: id, Operator: "noop"})
		seed = append(seed, store.NewTaskInstance{ID: uuid.NewString(), TaskID: id, MapIndex: core.NoMapIndex, MaxTries: 1, Operator: "noop"})
	}
	v, _, err := st.DagSync(ctx, &store.DagSyncParams{Spec: core.DAG{DagID: "d", Tasks: tasks}, Hash: "h", Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: "d", RunID: "r" + uuid.NewString()[:8], RunType: core.RunManual,
		State: core.RunRunning, DagVersionID: v, Now: time.Now(), TaskInstances: seed}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range seed {
		ti, err := st.TaskInstanceGet(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.StartFromTrigger(ctx, ti, core.Deferral{Trigger: spec, NextMethod: "done", Timeout: core.Duration(timeout)}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	return ids
}

func start(t testing.TB, st store.Store, svc *service.Service, reg *trigger.Registry, capacity int) (*triggerer.Triggerer, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	tr := &triggerer.Triggerer{Service: svc, Store: st, Registry: reg,
		Config: triggerer.Config{HeartbeatInterval: time.Second, Capacity: capacity}}
	done := make(chan struct{})
	go func() { defer close(done); _ = tr.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	wait.Until(t, 30*time.Second, "the triggerer to start", func() bool { return tr.ID() != "" })
	return tr, cancel
}

func TestTriggerFiresAndResumesEachWaiterOnce(t *testing.T) {
	for name, open := range engines() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			svc := service.New(service.Config{Store: st})
			ids := deferred(t, st, svc, 3, core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"0s"}`)}, time.Hour)
			start(t, st, svc, builtin.Registry(), 0)
			for _, id := range ids {
				wait.Until(t, 60*time.Second, "the trigger to resume "+id, func() bool {
					ti, err := st.TaskInstanceGet(t.Context(), id)
					return err == nil && ti.State == core.TIScheduled
				})
				ti, _ := st.TaskInstanceGet(t.Context(), id)
				if ti.NextMethod != "done" || !strings.Contains(string(ti.NextEvent), `"moment"`) || ti.TriggerID != nil || ti.TryNumber != 1 {
					t.Errorf("resumed try = %+v, want next method done with the timedelta's event, same try", ti)
				}
			}
			wait.Until(t, 60*time.Second, "the fired triggers to be deleted", func() bool {
				n, err := st.TriggerCount(t.Context(), &store.TriggerListParams{})
				return err == nil && n == 0
			})
		})
	}
}

// failing is a trigger type whose run fails, and one that ends without
// an event.
var failing = []trigger.Type{
	{Name: "boom", New: func(json.RawMessage) (trigger.Trigger, error) {
		return runFunc(func(context.Context, *trigger.Runtime) error { return fmt.Errorf("upstream API said 503") }), nil
	}},
	{Name: "silent", New: func(json.RawMessage) (trigger.Trigger, error) {
		return runFunc(func(context.Context, *trigger.Runtime) error { return nil }), nil
	}},
	{Name: "panics", New: func(json.RawMessage) (trigger.Trigger, error) {
		return runFunc(func(context.Context, *trigger.Runtime) error { panic("bad trigger") }), nil
	}},
}

type runFunc func(ctx context.Context, rt *trigger.Runtime) error

func (f runFunc) Run(ctx context.Context, rt *trigger.Runtime) error { return f(ctx, rt) }

func TestFailingTriggersFailTheirWaitersWithTheReason(t *testing.T) {
	st := sqlitetest.Open(t)
	reg := builtin.Registry()
	for _, tp := range failing {
		if err := reg.Register(tp); err != nil {
			t.Fatal(err)
		}
	}
	svc := service.New(service.Config{Store: st, Triggers: reg})
	want := map[string]string{"boom": "the boom trigger failed: upstream API said 503",
		"silent": "the silent trigger ended without an event", "panics": "the panics trigger failed: panic: bad trigger"}
	got := map[string]string{}
	for typ := range want {
		got[deferred(t, st, svc, 1, core.TriggerSpec{Type: typ}, 0)[0]] = typ
	}
	start(t, st, svc, reg, 0)
	for id, typ := range got {
		wait.Until(t, 60*time.Second, "the "+typ+" trigger to fail its waiter", func() bool {
			ti, err := st.TaskInstanceGet(t.Context(), id)
			return err == nil && ti.State == core.TIScheduled
		})
		ti, _ := st.TaskInstanceGet(t.Context(), id)
		var kw struct{ Error string }
		_ = json.Unmarshal(ti.NextKwargs, &kw)
		if ti.NextMethod != core.NextMethodFail || kw.Error != want[typ] {
			t.Errorf("%s waiter resumed with %s %s, want __fail__ with %q", typ, ti.NextMethod, ti.NextKwargs, want[typ])
		}
	}
}

// TestTwoTriggerersShareAndFailOver runs two triggerers on one PostgreSQL
// database: blocking triggers spread over both and none runs in two places
// at once; when one stops heartbeating (its context ends, as in a crash,
// without releasing anything), the other takes its triggers, and each
// waiter resumes once, on try 1.
func TestTwoTriggerersShareAndFailOver(t *testing.T) {
	st := engines()["postgres"](t)
	gate := make(chan struct{})
	var mu sync.Mutex
	live, twice := map[int64]int{}, map[int64]bool{}
	reg := builtin.Registry()
	must(t, reg.Register(trigger.Type{Name: "gate", New: func(json.RawMessage) (trigger.Trigger, error) {
		return runFunc(func(ctx context.Context, rt *trigger.Runtime) error {
			mu.Lock()
			live[rt.ID]++
			if live[rt.ID] > 1 {
				twice[rt.ID] = true
			}
			mu.Unlock()
			defer func() { mu.Lock(); live[rt.ID]--; mu.Unlock() }()
			select {
			case <-gate:
				return rt.Emit(ctx, map[string]int64{"trigger": rt.ID})
			case <-ctx.Done():
				return ctx.Err()
			}
		}), nil
	}}))
	svc := service.New(service.Config{Store: st, Triggers: reg})
	ids := deferred(t, st, svc, 20, core.TriggerSpec{Type: "gate"}, 0)
	var trs [2]*triggerer.Triggerer
	var stop [2]context.CancelFunc
	// The first has room for half: the two share the triggers.
	trs[0], stop[0] = start(t, st, svc, reg, 10)
	wait.Until(t, 60*time.Second, "the first triggerer to fill up", func() bool { return trs[0].Running() == 10 })
	trs[1], stop[1] = start(t, st, svc, reg, 0)
	wait.Until(t, 60*time.Second, "the second to run the other 10", func() bool { return trs[1].Running() == 10 })
	victim := 0
	stop[victim]()
	survivor := trs[1-victim]
	wait.Until(t, 60*time.Second, "the survivor to run all 20 triggers", func() bool { return survivor.Running() == 20 })
	close(gate)
	for _, id := range ids {
		wait.Until(t, 60*time.Second, "waiter "+id+" to resume", func() bool {
			ti, err := st.TaskInstanceGet(t.Context(), id)
			return err == nil && ti.State == core.TIScheduled && ti.TryNumber == 1 && len(ti.NextEvent) > 0
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(twice) > 0 {
		t.Errorf("triggers %v ran in two places at once", twice)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestTriggerLogGoesToTheWaitingTrysLog: a trigger's log lines are
// appended to the log of the try waiting on it, in the log store the
// api-server serves (the database, or a folder), so `weir tasks logs`
// shows what the wait did.
func TestTriggerLogGoesToTheWaitingTrysLog(t *testing.T) {
	for _, database := range []bool{true, false} {
		t.Run(fmt.Sprintf("database=%t", database), func(t *testing.T) {
			st := sqlitetest.Open(t)
			reg := builtin.Registry()
			must(t, reg.Register(trigger.Type{Name: "chatty", New: func(json.RawMessage) (trigger.Trigger, error) {
				return runFunc(func(ctx context.Context, rt *trigger.Runtime) error {
					rt.Logf("checking the upstream API")
					return rt.Emit(ctx, "ok")
				}), nil
			}}))
			svc := service.New(service.Config{Store: st, Triggers: reg})
			id := deferred(t, st, svc, 1, core.TriggerSpec{Type: "chatty"}, 0)[0]
			logs, _, err := logstore.Open(logstore.Options{Database: database, Folder: t.TempDir()}, st, nil)
			must(t, err)
			// The try's log so far, as its worker left it when it deferred.
			ti, _ := st.TaskInstanceGet(t.Context(), id)
			_, err = logs.AppendAt(t.Context(), tasklog.KeyOf(ti), 0, []byte("deferring\n"))
			must(t, err)
			ctx, cancel := context.WithCancel(t.Context())
			tr := &triggerer.Triggerer{Service: svc, Store: st, Registry: reg, Logs: logs, Config: triggerer.Config{HeartbeatInterval: time.Second}}
			done := make(chan struct{})
			go func() { defer close(done); _ = tr.Start(ctx) }()
			t.Cleanup(func() { cancel(); <-done })
			wait.Until(t, 60*time.Second, "the trigger to resume its waiter", func() bool {
				ti, err := st.TaskInstanceGet(t.Context(), id)
				return err == nil && ti.State == core.TIScheduled
			})
			b, _, err := logs.Read(t.Context(), tasklog.KeyOf(ti), 0)
			if err != nil || !strings.HasPrefix(string(b), "deferring\n[triggerer] ") || !strings.HasSuffix(string(b), " checking the upstream API\n") {
				t.Errorf("waiting try's log = %q, %v; want its lines, then the trigger's", b, err)
			}
		})
	}
}
