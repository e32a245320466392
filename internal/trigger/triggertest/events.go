package triggertest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/trigger"
)

// Fields lists the field key of each event's payload (an object, or its
// JSON), joined by commas, e.g. "3,1,2" for the row ids of three events.
func Fields(evs []trigger.WatchEvent, key string) string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, fmt.Sprint(Payload(e)[key]))
	}
	return strings.Join(out, ",")
}

// Payload is e's payload as an object (nil when it is not one).
func Payload(e trigger.WatchEvent) map[string]any {
	if m, ok := e.Payload.(map[string]any); ok {
		return m
	}
	raw, err := json.Marshal(e.Payload) // a json.RawMessage stays as it is
	var m map[string]any
	if err == nil && json.Unmarshal(raw, &m) == nil {
		return m
	}
	return nil
}

// LargestCommit is the number of events of w's largest committed batch.
func LargestCommit(w *Watcher) int {
	n := 0
	for _, b := range w.Commits() {
		n = max(n, len(b.Events))
	}
	return n
}

// ExpectFields fails t unless Fields(evs, key) is want; why says what
// the test expects and why.
func ExpectFields(t testing.TB, evs []trigger.WatchEvent, key, want, why string) {
	t.Helper()
	if got := Fields(evs, key); got != want {
		t.Errorf("events with %s %s, want %s: %s", key, got, want, why)
	}
}
