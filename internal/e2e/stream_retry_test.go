package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// streamRetryDAGFile: "fetch" is a stream sensor whose command trigger
// fails after its first five items on its first run (a marker file says
// which run it is) and, run again, resumes after the stream's last index;
// "insert" iterates over the stream.
const streamRetryDAGFile = `dag_id: stream_retry
tasks:
  - task_id: fetch
    operator: sensor
    retries: 1
    retry_delay: 1s
    trigger:
      type: command
      command: |
        if [ ! -e %[1]s ]; then
          for i in 0 1 2 3 4; do echo "{\"n\": $i}"; done
          touch %[1]s; echo "the source went away" >&2; exit 5
        fi
        for i in $(seq $((WEIR_STREAM_LAST_INDEX + 1)) 9); do echo "{\"n\": $i}"; done
  - task_id: insert
    operator: bash
    iterate: fetch
    bash_command: echo "inserted {{ .map_args.item.n }}"
`

// TestAFailedStreamTriggerIsRetried: a stream sensor whose trigger fails
// mid-stream and has a retry left keeps its stream open; its retry's
// trigger resumes after the last item, so the stream holds each of its
// ten items once and each gets one instance, and the run succeeds. (A
// failure closed the stream, and the retry failed at once on it.)
func TestAFailedStreamTriggerIsRetried(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "failed-once")
	s := runOnce(t, nil, "stream_retry", fmt.Sprintf(streamRetryDAGFile, marker))
	tries := s.api.Tries("stream_retry", "r1", "fetch")
	if len(tries) != 2 || !failedTry(tries[0]) || tries[1].State != core.TISuccess {
		t.Fatalf("tries of fetch = %+v, want the first failed and the second a success", tries)
	}
	seen := map[int]int{}
	for _, ti := range s.api.TaskInstances("stream_retry", "r1") {
		if ti.TaskID == "insert" && ti.MapIndex >= 0 {
			seen[ti.MapIndex]++
			if ti.State != core.TISuccess {
				t.Errorf("insert[%d] = %s, want success", ti.MapIndex, ti.State)
			}
		}
	}
	if len(seen) != 10 {
		t.Errorf("insert has instances %v, want 0..9 once each", seen)
	}
	if log := s.api.Log("stream_retry", "r1", "fetch", 1); !strings.Contains(log, "the source went away") || !strings.Contains(log, "stays open: the retry resumes it") {
		t.Errorf("the first try's log does not say why it failed and that the stream stays open:\n%s", log)
	}
}
