package postgres

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weirflow/weir/internal/store/sqlstore"
)

// listener holds a dedicated connection LISTENing on notifyChannel and hands
// every payload to the store. When the connection fails it reconnects with
// backoff and wakes every local subscriber, since notifications may have been
// missed meanwhile.
type listener struct {
	cfg    *pgx.ConnConfig
	log    *slog.Logger
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (l *listener) start(st *sqlstore.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		l.run(ctx, st)
	}()
}

func (l *listener) stop() {
	l.cancel()
	l.wg.Wait()
}

func (l *listener) run(ctx context.Context, st *sqlstore.Store) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := l.listen(ctx, st)
		if ctx.Err() != nil {
			return
		}
		l.log.Warn("postgres LISTEN connection lost; reconnecting", "err", err, "backoff", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// listen connects, LISTENs and delivers notifications until an error.
func (l *listener) listen(ctx context.Context, st *sqlstore.Store) error {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	st.WakeAll() // anything sent while not listening was missed
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		st.Deliver(n.Payload)
	}
}
