package sqlstore

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// hub fans notifications out to this process's subscribers. Each subscriber
// has a one-slot buffer: notifications coalesce and a slow subscriber never
// blocks a publisher.
type hub struct {
	mu     sync.Mutex
	subs   map[string]map[chan struct{}]struct{}
	closed bool
}

func newHub() *hub { return &hub{subs: map[string]map[chan struct{}]struct{}{}} }

// subscribe registers a subscriber until ctx is done; the returned channel is
// closed then (or when the store closes).
func (h *hub) subscribe(ctx context.Context, channel string) <-chan struct{} {
	c := make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(c)
		return c
	}
	if h.subs[channel] == nil {
		h.subs[channel] = map[chan struct{}]struct{}{}
	}
	h.subs[channel][c] = struct{}{}
	context.AfterFunc(ctx, func() { h.unsubscribe(channel, c) })
	return c
}

func (h *hub) unsubscribe(channel string, c chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[channel][c]; ok {
		delete(h.subs[channel], c)
		close(c)
	}
}

// publish wakes every subscriber of channel without blocking.
func (h *hub) publish(channel string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.subs[channel] {
		select {
		case c <- struct{}{}:
		default: // already has a pending wake-up
		}
	}
}

// publishAll wakes every subscriber of every channel (after a missed
// notification window, such as a lost LISTEN connection).
func (h *hub) publishAll() {
	h.mu.Lock()
	channels := make([]string, 0, len(h.subs))
	for ch := range h.subs {
		channels = append(channels, ch)
	}
	h.mu.Unlock()
	for _, ch := range channels {
		h.publish(ch)
	}
}

// closeAll closes every subscriber channel; later subscriptions get a closed
// channel.
func (h *hub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for ch, set := range h.subs {
		for c := range set {
			close(c)
		}
		delete(h.subs, ch)
	}
}

// Subscribe returns a channel that receives a coalesced value whenever
// channel is notified, until ctx is done or the store is closed (then the
// channel is closed).
func (s *Store) Subscribe(ctx context.Context, channel string) <-chan struct{} {
	return s.hub.subscribe(ctx, channel)
}

// Notify wakes channel's subscribers in this process and, when the dialect
// has NotifySQL, in other processes (notifier.go). Inside a transaction
// nothing is sent before commit, and nothing at all on rollback.
func (s *Store) Notify(_ context.Context, channel string) error {
	if s.tx != nil {
		if !slices.Contains(*s.pending, channel) {
			*s.pending = append(*s.pending, channel)
		}
		return nil
	}
	s.published(channel)
	return nil
}

// published wakes channel's subscribers once what they are told of is
// committed: this process's at once, the others' through the notifier.
func (s *Store) published(channel string) {
	s.hub.publish(channel)
	if s.notifier != nil {
		s.notifier.add(channel)
	}
}

// Deliver handles a notification payload received from the database (see
// Dialect.NotifySQL): it wakes local subscribers unless the notification
// came from this Store, which woke them already.
func (s *Store) Deliver(payload string) {
	channel, origin, _ := strings.Cut(payload, "\n")
	if origin == s.origin {
		return
	}
	s.hub.publish(channel)
}

// WakeAll wakes every local subscriber, for use after notifications may have
// been missed (a LISTEN connection was lost and re-established).
func (s *Store) WakeAll() { s.hub.publishAll() }

// encodePayload packs a channel name and the sender's origin.
func encodePayload(channel, origin string) string { return channel + "\n" + origin }
