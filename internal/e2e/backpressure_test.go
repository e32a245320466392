package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// backpressureBound is the max_pending of TestFastProducerStaysWithinMaxPending.
const backpressureBound = 5

// backpressureDAGFile: a command trigger that prints 150 events as fast as
// it can, handled by a streaming operator that takes 20 ms per event.
const backpressureDAGFile = `dag_id: fast
tasks:
  - task_id: load
    operator: sensor
    trigger:
      type: command
      command: |
        for i in $(seq $((WEIR_STREAM_LAST_INDEX + 1)) 149); do echo "{\"n\": $i}"; done
    handle_command: |
      while read -r ev; do sleep 0.02; echo ok >&3; done
`

// TestFastProducerStaysWithinMaxPending runs, on each engine, a producer
// far faster than its consumer on a stream bounded by max_pending 5
// ([triggerer] stream_max_pending): the stream's pending count, sampled
// through the REST API for the whole run, reaches the bound (the producer
// is held there) and never exceeds it, and every event arrives.
func TestFastProducerStaysWithinMaxPending(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, env []string) {
		dags, home := t.TempDir(), t.TempDir()
		writeFile(t, filepath.Join(dags, "fast.yaml"), backpressureDAGFile)
		env = append(env, fmt.Sprintf("WEIR__TRIGGERER__STREAM_MAX_PENDING=%d", backpressureBound))
		s := startStandalone(t, home, dags, env...)
		s.api.WaitDAG("fast")
		run := s.api.Trigger("fast", "r1", nil)
		path := "/api/v2/streams/" + url.PathEscape(core.TaskStreamID(run.ID, "load"))
		samples, most := 0, 0
		var st core.Stream
		for polls := 1; !st.Closed || st.Pending > 0; polls++ {
			if polls%20 == 0 {
				var r core.DagRun
				if s.api.Get(runPath("fast", "r1"), &r); r.State.Terminal() {
					break // ended while pending: reported below
				}
			}
			status, b := s.api.Do("GET", path, nil)
			if status == 404 {
				continue // not opened yet
			}
			if status != 200 || json.Unmarshal(b, &st) != nil {
				t.Fatalf("GET %s: %d %s", path, status, b)
			}
			samples++
			most = max(most, st.Pending)
			if st.Pending > backpressureBound {
				t.Fatalf("sample %d: %d events pending, above max_pending %d (%+v)", samples, st.Pending, backpressureBound, st)
			}
		}
		if most != backpressureBound {
			t.Errorf("at most %d events pending over %d samples, want the producer held at the bound %d", most, samples, backpressureBound)
		}
		if done := s.api.WaitRunDone("fast", "r1"); done.State != core.RunSuccess || st.NextIndex != 150 || st.MaxPending != backpressureBound {
			t.Errorf("run %s, stream %+v; want success with 150 events bounded by %d", done.State, st, backpressureBound)
		}
		t.Logf("%d samples, at most %d pending", samples, most)
	})
}
