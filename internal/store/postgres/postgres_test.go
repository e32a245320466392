package postgres_test

import (
	"errors"
	"os"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/postgres"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/store/storetest"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/secretstest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open opens a store on dsn, closed when t ends.
func open(t testing.TB, dsn string) *sqlstore.Store {
	t.Helper()
	st, err := postgres.Open(t.Context(), dsn, postgres.Options{Secrets: secretstest.Box()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return st
}

// openTest opens a migrated store on a fresh database.
func openTest(t testing.TB) *sqlstore.Store {
	t.Helper()
	st := open(t, pgtest.DSN(t))
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTest(t) })
}

func TestMigrations(t *testing.T) {
	storetest.RunMigrations(t, func(t *testing.T) *sqlstore.Store { return open(t, pgtest.DSN(t)) })
}

// twoProcesses opens two stores (two pools, two LISTEN connections) on one
// migrated database, as two processes would.
func twoProcesses(t testing.TB) (a, b *sqlstore.Store) {
	t.Helper()
	dsn := pgtest.DSN(t)
	a = open(t, dsn)
	if err := a.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return a, open(t, dsn)
}

// listening subscribes to channel on to and returns once a notification
// from from reached it, with nothing pending. The LISTEN connection may
// connect after the first notification: retrying until one lands is a
// wait for a signal, not a timing assumption.
func listening(t testing.TB, from, to *sqlstore.Store, channel string) <-chan struct{} {
	t.Helper()
	sub := to.Subscribe(t.Context(), channel)
	storetest.WaitSignal(t, storetest.NotifyUntil(t.Context(), t, from, channel, sub), "listener connected")
	drain(sub)
	return sub
}

func TestNotifyAcrossProcesses(t *testing.T) {
	a, b := twoProcesses(t)
	ctx := t.Context()
	sched := b.Subscribe(ctx, store.ChannelScheduler)
	queued := listening(t, a, b, store.ChannelQueued)
	drain(sched)

	boom := errors.New("boom")
	err := a.WithTx(ctx, func(tx store.Store) error {
		if err := tx.Notify(ctx, store.ChannelScheduler); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WithTx = %v", err)
	}
	if err := a.WithTx(ctx, func(tx store.Store) error { return tx.Notify(ctx, store.ChannelQueued) }); err != nil {
		t.Fatal(err)
	}
	storetest.WaitSignal(t, queued, "notify committed after a rolled-back one")
	// Notifications arrive in commit order on one LISTEN connection, so the
	// rolled-back one would have been delivered before this.
	select {
	case <-sched:
		t.Fatal("a rolled-back notification reached another process")
	default:
	}

	// Kill the LISTEN connections: b must reconnect, wake its subscribers
	// (notifications may have been missed) and receive notifications again.
	if _, err := a.DB().ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN weir_events' AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	storetest.WaitSignal(t, sched, "wake-up after the LISTEN connection was re-established")
	after := b.Subscribe(ctx, "weir_test_after_reconnect")
	storetest.WaitSignal(t, storetest.NotifyUntil(ctx, t, a, "weir_test_after_reconnect", after), "notify after reconnect")
}

// TestNotifyBeforeClose: a process that notifies and exits at once (a CLI
// command that triggers a run) still tells the others: Close sends what the
// notifier holds before the pool closes.
func TestNotifyBeforeClose(t *testing.T) {
	a, cli := twoProcesses(t)
	sched := a.Subscribe(t.Context(), store.ChannelScheduler)
	listening(t, cli, a, "weir_test_listening")
	drain(sched)
	if err := cli.Notify(t.Context(), store.ChannelScheduler); err != nil {
		t.Fatal(err)
	}
	if err := cli.Close(); err != nil {
		t.Fatal(err)
	}
	storetest.WaitSignal(t, sched, "a notification sent just before Close")
}

func drain(c <-chan struct{}) {
	select {
	case <-c:
	default:
	}
}

func TestInvalidUUIDIsInvalid(t *testing.T) {
	st := openTest(t)
	_, err := st.TaskInstanceGet(t.Context(), "not-a-uuid")
	if !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("get by malformed id: %v, want ErrInvalid", err)
	}
}

func BenchmarkClaimStartFinish(b *testing.B) {
	storetest.RunBenchClaimStartFinish(b, func(b *testing.B) store.Store { return openTest(b) })
}

// BenchmarkNotifyAcrossProcesses measures a notification from one process
// to another: Notify on one store until the other's subscriber wakes (the
// sender's notifier, pg_notify, the receiver's LISTEN connection and hub).
func BenchmarkNotifyAcrossProcesses(b *testing.B) {
	from, to := twoProcesses(b)
	woken := listening(b, from, to, store.ChannelQueued)
	b.ResetTimer()
	for range b.N {
		if err := from.Notify(b.Context(), store.ChannelQueued); err != nil {
			b.Fatal(err)
		}
		storetest.WaitSignal(b, woken, "notification")
	}
}
