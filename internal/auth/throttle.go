package auth

import (
	"sync"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// LoginThrottle limits password guessing: after Free failed logins for one
// user, or from one address, each further attempt for it must wait, the
// wait doubling with every failure from Base up to Max. The state is in
// memory, per api-server process: several api-servers each allow Free
// failures, and a restart forgets them. It is safe for concurrent use.
type LoginThrottle struct {
	cfg   ThrottleConfig
	clock core.Clock

	mu   sync.Mutex
	keys map[string]*attempts
}

// ThrottleConfig tunes a LoginThrottle; zero fields take the defaults.
type ThrottleConfig struct {
	Free int           // failures before any wait; default 5
	Base time.Duration // first wait; default 1 s
	Max  time.Duration // longest wait; default 5 min
	// Forget is how long after its last failure a key is forgotten;
	// default 15 min.
	Forget time.Duration
}

// maxThrottleKeys bounds the memory the throttle uses; past it, keys whose
// wait is over and that failed long enough ago are swept.
const maxThrottleKeys = 100_000

type attempts struct {
	failures int
	last     time.Time // of the last failure
	until    time.Time // no attempt before this
}

// NewLoginThrottle returns a throttle; clock nil = core.SystemClock.
func NewLoginThrottle(cfg ThrottleConfig, clock core.Clock) *LoginThrottle {
	if cfg.Free <= 0 {
		cfg.Free = 5
	}
	if cfg.Base <= 0 {
		cfg.Base = time.Second
	}
	if cfg.Max <= 0 {
		cfg.Max = 5 * time.Minute
	}
	if cfg.Forget <= 0 {
		cfg.Forget = 15 * time.Minute
	}
	if clock == nil {
		clock = core.SystemClock{}
	}
	return &LoginThrottle{cfg: cfg, clock: clock, keys: map[string]*attempts{}}
}

// throttleKeys are the keys one login attempt counts against.
func throttleKeys(username, addr string) [2]string {
	return [2]string{"user\x00" + username, "addr\x00" + addr}
}

// Wait returns how long a login of username from addr must wait before it
// may be tried (0 = now). Check it before the password, so that a locked
// key learns nothing, not even from a right password.
func (t *LoginThrottle) Wait(username, addr string) time.Duration {
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	var wait time.Duration
	for _, k := range throttleKeys(username, addr) {
		if a := t.keys[k]; a != nil && a.until.After(now) {
			wait = max(wait, a.until.Sub(now))
		}
	}
	return wait
}

// Failed records a wrong password (or unknown user) for username from addr.
func (t *LoginThrottle) Failed(username, addr string) {
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.keys) >= maxThrottleKeys {
		t.sweep(now)
	}
	for _, k := range throttleKeys(username, addr) {
		a := t.keys[k]
		if a == nil || now.Sub(a.last) > t.cfg.Forget {
			a = &attempts{}
			t.keys[k] = a
		}
		a.failures++
		a.last = now
		if over := a.failures - t.cfg.Free; over >= 0 {
			wait := t.cfg.Max
			if over < 30 {
				wait = min(t.cfg.Base<<over, t.cfg.Max)
			}
			a.until = now.Add(wait)
		}
	}
}

// Succeeded forgets the failures of username and of addr.
func (t *LoginThrottle) Succeeded(username, addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range throttleKeys(username, addr) {
		delete(t.keys, k)
	}
}

// sweep drops keys that may try again and failed longer than Forget ago.
func (t *LoginThrottle) sweep(now time.Time) {
	for k, a := range t.keys {
		if !a.until.After(now) && now.Sub(a.last) > t.cfg.Forget {
			delete(t.keys, k)
		}
	}
}
