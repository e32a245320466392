package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// Two schedulers (two stores on one database, as two processes would be)
// never queue at the same time: the second waits on the advisory lock until
// the first's transaction ends.
func TestQueueLockSerializesSchedulers(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	a, b := open(t, dsn), open(t, dsn)
	if err := a.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	entered, release := make(chan struct{}), make(chan struct{})
	aDone := make(chan error, 1)
	go func() {
		aDone <- a.WithQueueLock(ctx, func(store.Store) error { close(entered); <-release; return nil })
	}()
	<-entered
	bIn := make(chan struct{})
	bDone := make(chan error, 1)
	go func() {
		bDone <- b.WithQueueLock(ctx, func(store.Store) error { close(bIn); return nil })
	}()
	// b is blocked on the lock (PostgreSQL shows its request as not granted).
	wait.Until(t, 20*time.Second, "the second scheduler to wait for the queueing lock", func() bool {
		var waiting int
		err := a.DB().QueryRowContext(ctx, `SELECT count(*) FROM pg_locks
			WHERE locktype = 'advisory' AND NOT granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting)
		return err == nil && waiting == 1
	})
	select {
	case <-bIn:
		t.Fatal("the second scheduler entered while the first held the queueing lock")
	default:
	}
	close(release)
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	<-bIn
}

// A try's end that would queue its successors never waits for the queueing
// lock: while a scheduler holds it, TryQueueLock says no at once; once the
// scheduler's transaction ends, it takes the lock until its own ends.
func TestTryQueueLockNeverWaits(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	a, b := open(t, dsn), open(t, dsn)
	if err := a.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := b.TryQueueLock(ctx); err == nil {
		t.Error("TryQueueLock outside a transaction: no error, want one")
	}
	entered, release := make(chan struct{}), make(chan struct{})
	aDone := make(chan error, 1)
	go func() {
		aDone <- a.WithQueueLock(ctx, func(store.Store) error { close(entered); <-release; return nil })
	}()
	<-entered
	tryLockRefused(t, b, "while a scheduler holds the lock")
	close(release)
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	held, leave := make(chan struct{}), make(chan struct{})
	bDone := make(chan error, 1)
	go func() {
		bDone <- b.WithTx(ctx, func(tx store.Store) error {
			if ok, err := tryLock(ctx, tx); err != nil || !ok {
				t.Errorf("TryQueueLock of a free lock = %v (err %v), want true", ok, err)
			}
			close(held)
			<-leave
			return nil
		})
	}()
	<-held
	tryLockRefused(t, a, "while another try end holds it")
	close(leave)
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
}

// tryLockRefused checks that TryQueueLock in a transaction of st says no
// at once.
func tryLockRefused(t *testing.T, st store.Store, when string) {
	t.Helper()
	ctx := context.Background()
	if err := st.WithTx(ctx, func(tx store.Store) error {
		if ok, err := tryLock(ctx, tx); err != nil || ok {
			t.Errorf("TryQueueLock %s = %v (err %v), want false at once", when, ok, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// tryLock is TryQueueLock and its answer (held sends the lock's statement,
// nothing having carried it).
func tryLock(ctx context.Context, tx store.Store) (bool, error) {
	held, err := tx.TryQueueLock(ctx)
	if err != nil {
		return false, err
	}
	return held()
}
