package execclient

import (
	"regexp"
	"testing"
	"time"
)

// A made-up idempotency key is "weir-" and 32 hex digits, unique, and a key
// made later sorts after one made earlier (the unique index grows at its
// end).
func TestNewIdempotencyKey(t *testing.T) {
	format := regexp.MustCompile(`^weir-[0-9a-f]{32}$`)
	seen := map[string]bool{}
	prev := NewIdempotencyKey()
	for i := range 1000 {
		if i%100 == 0 {
			time.Sleep(2 * time.Millisecond)
		}
		k := NewIdempotencyKey()
		if !format.MatchString(k) {
			t.Fatalf("key %q is not weir- and 32 hex digits", k)
		}
		if seen[k] {
			t.Fatalf("key %q made twice", k)
		}
		seen[k] = true
		if i%100 == 0 && k <= prev { // a later millisecond
			t.Fatalf("key %q made after %q sorts before it", k, prev)
		}
		prev = k
	}
}
