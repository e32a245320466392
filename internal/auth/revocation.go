package auth

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// DefaultRevocationTTL is how long a Revocations remembers one subject's
// answer: a credential revoked on one api-server is refused by every other
// within this time.
const DefaultRevocationTTL = 2 * time.Second

// maxRevocationEntries bounds a Revocations' cache; when full it starts over.
const maxRevocationEntries = 4096

// RevocationLookup returns the time up to which the credentials of scope's
// subject are revoked; the zero time when they never were.
type RevocationLookup func(ctx context.Context, scope, subject string) (time.Time, error)

// Revocations decides whether a credential was revoked, from a cache of
// the shared store's answers per subject, each kept TTL. The cache is
// bounded (maxRevocationEntries), so a flood of subjects costs lookups, not
// memory. It is safe for concurrent use.
type Revocations struct {
	lookup RevocationLookup
	ttl    time.Duration
	clock  core.Clock

	mu      sync.Mutex
	entries map[[2]string]revocationEntry
}

type revocationEntry struct {
	before  time.Time // credentials issued at or before are revoked; zero = none
	fetched time.Time
}

// NewRevocations returns a Revocations over lookup; ttl <= 0 means
// DefaultRevocationTTL, clock nil core.SystemClock.
func NewRevocations(lookup RevocationLookup, ttl time.Duration, clock core.Clock) *Revocations {
	if ttl <= 0 {
		ttl = DefaultRevocationTTL
	}
	if clock == nil {
		clock = core.SystemClock{}
	}
	return &Revocations{lookup: lookup, ttl: ttl, clock: clock, entries: map[[2]string]revocationEntry{}}
}

// Check returns an error wrapping core.ErrUnauthorized when c was issued at
// or before the revocation of its subject's credentials of its scope. A
// failed lookup is returned as is (the store is unreachable: no answer is
// better than a wrong one).
func (r *Revocations) Check(ctx context.Context, c *Claims) error {
	key := [2]string{c.Scope, c.Subject}
	now := r.clock.Now()
	r.mu.Lock()
	e, ok := r.entries[key]
	r.mu.Unlock()
	if !ok || now.Sub(e.fetched) >= r.ttl {
		before, err := r.lookup(ctx, c.Scope, c.Subject)
		if err != nil {
			return fmt.Errorf("check revocation of %s credential %s: %w", c.Scope, c.Subject, err)
		}
		e = revocationEntry{before: before, fetched: now}
		r.mu.Lock()
		if len(r.entries) >= maxRevocationEntries {
			clear(r.entries)
		}
		r.entries[key] = e
		r.mu.Unlock()
	}
	if issued, ok := c.issued(); e.before.IsZero() || (ok && issued.After(e.before)) {
		return nil
	}
	return fmt.Errorf("%w: the %s credentials of %q issued up to %s are revoked; issue a new one",
		core.ErrUnauthorized, c.Scope, c.Subject, e.before.UTC().Format(time.RFC3339))
}
