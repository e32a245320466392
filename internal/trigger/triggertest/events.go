package triggertest

import (
	"fmt"
	"strings"

	"github.com/weirflow/weir/internal/trigger"
)

// Fields lists the field key of each event's payload (an object), joined
// by commas, e.g. "3,1,2" for the row ids of three events.
func Fields(evs []trigger.WatchEvent, key string) string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		m, _ := e.Payload.(map[string]any)
		out = append(out, fmt.Sprint(m[key]))
	}
	return strings.Join(out, ",")
}

// LargestCommit is the number of events of w's largest committed batch.
func LargestCommit(w *Watcher) int {
	n := 0
	for _, b := range w.Commits() {
		n = max(n, len(b.Events))
	}
	return n
}
