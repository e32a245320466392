package sqlstore

import (
	"context"
	"database/sql"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// notifyTimeout bounds one send of the pending notifications.
const notifyTimeout = 5 * time.Second

// notifier tells other processes of this process's notifications
// (Dialect.NotifySQL) from a goroutine of its own, once the change is
// committed: neither a request nor a transaction (the queueing lock's)
// waits for the round trip, and channels notified while a send is under
// way go together in the next. Notifications are wake-ups, never the data:
// one lost with a crash right after a commit is made up for by the
// receivers' polls, as one missed while a LISTEN connection was down is.
type notifier struct {
	db      *sql.DB
	query   string
	origin  string
	log     *slog.Logger
	mu      sync.Mutex
	pending []string      // channels to send, in the order first notified
	kick    chan struct{} // one-slot: pending is not empty
	done    chan struct{} // closed by stop
	stopped chan struct{} // closed once the last pending channel was sent
}

func newNotifier(db *sql.DB, query, origin string, log *slog.Logger) *notifier {
	n := &notifier{db: db, query: query, origin: origin, log: log,
		kick: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	go n.run()
	return n
}

// add queues channel for sending.
func (n *notifier) add(channel string) {
	n.mu.Lock()
	if !slices.Contains(n.pending, channel) {
		n.pending = append(n.pending, channel)
	}
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default: // a send is already due
	}
}

func (n *notifier) run() {
	defer close(n.stopped)
	for {
		select {
		case <-n.kick:
			n.send()
		case <-n.done:
			n.send() // what was notified before Close still goes out
			return
		}
	}
}

// send sends every pending channel, within notifyTimeout in all (a Close
// while the database is unreachable waits no longer).
func (n *notifier) send() {
	n.mu.Lock()
	channels := n.pending
	n.pending = nil
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	for _, ch := range channels {
		if _, err := n.db.ExecContext(ctx, n.query, encodePayload(ch, n.origin)); err != nil {
			n.log.Warn("tell other processes of a change; they see it at their next poll", "channel", ch, "err", err)
		}
	}
}

// stop sends what is pending and ends the goroutine.
func (n *notifier) stop() {
	close(n.done)
	<-n.stopped
}
