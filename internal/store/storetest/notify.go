package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// waitGuard bounds waits for a signal that must come; it is a hang guard,
// not a timing assertion.
const waitGuard = 30 * time.Second

// received reports whether c holds a value right now.
func received(c <-chan struct{}) bool {
	select {
	case _, ok := <-c:
		return ok
	default:
		return false
	}
}

// WaitSignal fails t unless c receives a value before the hang guard.
func WaitSignal(t testing.TB, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case _, ok := <-c:
		if !ok {
			t.Fatalf("%s: subscription closed", what)
		}
	case <-time.After(waitGuard):
		t.Fatalf("%s: no notification", what)
	}
}

func testNotifySubscribe(t *testing.T, f *fixture) {
	ctx, cancel := context.WithCancel(f.ctx)
	a1 := f.st.Subscribe(ctx, store.ChannelQueued)
	a2 := f.st.Subscribe(ctx, store.ChannelQueued)
	other := f.st.Subscribe(ctx, store.ChannelScheduler)

	for range 3 { // coalesced into one pending wake-up, never blocking
		must(t, f.st.Notify(f.ctx, store.ChannelQueued), "notify")
	}
	if !received(a1) || !received(a2) {
		t.Fatal("every subscriber of the channel must be woken by Notify outside a transaction")
	}
	if received(a1) {
		t.Error("three notifications while not reading must coalesce into one wake-up")
	}
	if received(other) {
		t.Error("a subscriber of another channel was woken")
	}
	cancel()
	for _, c := range []<-chan struct{}{a1, a2, other} {
		select {
		case _, ok := <-c:
			if ok {
				t.Error("value after cancel, want the channel closed")
			}
		case <-time.After(waitGuard):
			t.Fatal("subscription not closed after its context was cancelled")
		}
	}
	must(t, f.st.Notify(f.ctx, store.ChannelQueued), "notify without subscribers")
}

func testNotifyAfterCommitOnly(t *testing.T, f *fixture) {
	sub := f.st.Subscribe(f.ctx, store.ChannelScheduler)
	err := f.st.WithTx(f.ctx, func(tx store.Store) error {
		if err := tx.Notify(f.ctx, store.ChannelScheduler); err != nil {
			return err
		}
		if received(sub) {
			t.Error("notified before commit")
		}
		return nil
	})
	must(t, err, "tx")
	if !received(sub) {
		t.Fatal("not notified after commit")
	}

	boom := errors.New("boom")
	err = f.st.WithTx(f.ctx, func(tx store.Store) error {
		if err := tx.Notify(f.ctx, store.ChannelScheduler); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WithTx returned %v, want the callback's error", err)
	}
	if received(sub) {
		t.Error("notified although the transaction rolled back")
	}
}

func testTxCommitRollback(t *testing.T, f *fixture) {
	f.dag("etl")
	boom := errors.New("boom")
	err := f.st.WithTx(f.ctx, func(tx store.Store) error {
		_, err := tx.DagRunCreate(f.ctx, &store.DagRunCreateParams{DagID: "etl", RunID: "rolled_back",
			RunType: core.RunManual, State: core.RunQueued, Now: f.now,
			TaskInstances: []store.NewTaskInstance{newTI("a", core.TINone)}})
		if err != nil {
			return err
		}
		if _, err := tx.DagRunGet(f.ctx, "etl", "rolled_back"); err != nil {
			t.Errorf("a transaction must read its own writes: %v", err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WithTx returned %v, want the callback's error", err)
	}
	_, err = f.st.DagRunGet(f.ctx, "etl", "rolled_back")
	wantErr(t, err, core.ErrNotFound, "run created in a rolled-back transaction")

	err = f.st.WithTx(f.ctx, func(tx store.Store) error {
		if _, err := tx.DagRunCreate(f.ctx, &store.DagRunCreateParams{DagID: "etl", RunID: "kept",
			RunType: core.RunManual, State: core.RunQueued, Now: f.now}); err != nil {
			return err
		}
		// Nested WithTx joins the outer transaction.
		return tx.WithTx(f.ctx, func(inner store.Store) error {
			return inner.PoolUpsert(f.ctx, &core.Pool{Name: "tx_pool", Slots: 3})
		})
	})
	must(t, err, "committed tx")
	_, err = f.st.DagRunGet(f.ctx, "etl", "kept")
	must(t, err, "run created in a committed transaction")

	// A conflict inside the transaction surfaces as ErrConflict and undoes
	// the earlier writes of the same transaction.
	err = f.st.WithTx(f.ctx, func(tx store.Store) error {
		if err := tx.PoolUpsert(f.ctx, &core.Pool{Name: "undone", Slots: 1}); err != nil {
			return err
		}
		_, err := tx.DagRunCreate(f.ctx, &store.DagRunCreateParams{DagID: "etl", RunID: "kept",
			RunType: core.RunManual, State: core.RunQueued, Now: f.now})
		return err
	})
	wantErr(t, err, core.ErrConflict, "duplicate run in a transaction")
	pools, err := f.st.PoolList(f.ctx, &store.PoolListParams{})
	must(t, err, "pools")
	for _, p := range pools {
		if p.Name == "undone" {
			t.Error("pool written before the failing statement survived the rollback")
		}
	}
}

// NotifyUntil notifies channel on st repeatedly until sub receives, and
// returns a channel that is signalled then. It suits subscribers in another
// process whose listener may not be connected yet.
func NotifyUntil(ctx context.Context, t testing.TB, st store.Store, channel string, sub <-chan struct{}) <-chan struct{} {
	done := make(chan struct{}, 1)
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			if err := st.Notify(ctx, channel); err != nil {
				t.Errorf("notify %s: %v", channel, err)
				return
			}
			select {
			case <-sub:
				done <- struct{}{}
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return done
}
