// Package wait polls a condition in tests, for the waits no signal covers.
package wait

import (
	"testing"
	"time"
)

// Until calls cond every 10 ms until it holds, failing t with what it was
// waiting for once within has passed.
func Until(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
