package triggertest

import (
	"testing"

	"github.com/weirflow/weir/internal/trigger"
)

// Payloads returns the payloads of evs as T (a watcher type's payload
// struct), failing t when one is not a T.
func Payloads[T any](t testing.TB, evs []trigger.WatchEvent) []T {
	t.Helper()
	out := make([]T, 0, len(evs))
	for _, e := range evs {
		p, ok := e.Payload.(T)
		if !ok {
			t.Fatalf("payload %#v is a %T, want a %T", e.Payload, e.Payload, p)
		}
		out = append(out, p)
	}
	return out
}
