package e2e

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// handleDAGFile: "load" is a streaming operator: its command trigger
// prints 100 events (n = 1..100), resuming after the stream's last index,
// and its handle_command reads them as JSON lines, appends each n to
// $OUT and acknowledges it on fd 3 — except that its first try fails on
// event 37 (a marker file tells the tries apart).
const handleDAGFile = `dag_id: handled
tasks:
  - task_id: load
    operator: sensor
    retries: 1
    retry_delay: 1s
    env:
      OUT: %[1]s
      MARK: %[2]s
    trigger:
      type: command
      command: |
        for i in $(seq $((WEIR_STREAM_LAST_INDEX + 1)) 99); do echo "{\"n\": $((i + 1))}"; done
    handle_command: |
      echo "from $WEIR_STREAM_FROM"
      while read -r ev; do
        n=${ev//[^0-9]/}
        if [ "$n" = 37 ] && [ ! -e "$MARK" ]; then touch "$MARK"; echo "failing on event $n" >&2; exit 1; fi
        echo "$n" >> "$OUT"
        echo ok >&3
      done
  - task_id: report
    operator: bash
    depends_on: [load]
    bash_command: echo report
`

// TestStreamHandlerRetryResumesAtTheFailedEvent runs a streaming operator
// over 100 events on each engine whose handler fails on event 37 in its
// first try: the retry resumes at event 37 (the stream's consumption is
// the durable position), so every event is handled exactly once, in
// order — events 1..36 by the first try, 37..100 by the second — and the
// task succeeds on its second try with the count as its return value.
func TestStreamHandlerRetryResumesAtTheFailedEvent(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, env []string) {
		dir := t.TempDir()
		out, mark := filepath.Join(dir, "handled"), filepath.Join(dir, "failed-once")
		s := runOnce(t, env, "handled", fmt.Sprintf(handleDAGFile, out, mark))
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Fields(string(b))
		if len(lines) != 100 {
			t.Fatalf("%d events handled, want 100 (each once): %v", len(lines), lines)
		}
		for i, l := range lines {
			if l != fmt.Sprint(i+1) {
				t.Fatalf("handled event %d is %s, want %d (in order, none twice): %v", i+1, l, i+1, lines)
			}
		}
		if _, err := os.Stat(mark); err != nil {
			t.Fatalf("the first try did not fail on event 37: %v", err)
		}
		var ti core.TaskInstance
		s.api.Get(runPath("handled", "r1")+"/taskInstances/load", &ti)
		if ti.State != core.TISuccess || ti.TryNumber != 2 {
			t.Fatalf("load = %s on try %d, want success on try 2", ti.State, ti.TryNumber)
		}
		var x core.XCom
		s.api.Get(runPath("handled", "r1")+"/taskInstances/load/xcomEntries/return_value", &x)
		if !strings.Contains(string(x.Value), `"handled":100`) {
			t.Errorf("load returned %s, want handled 100", x.Value)
		}
		log := s.api.Log("handled", "r1", "load", 2)
		if !strings.Contains(log, "from 36") {
			t.Errorf("the second try's handler did not start at sequence index 36 (event 37):\n%s", log)
		}
	})
}

// givesUpDAGFile: a streaming operator whose trigger never ends and whose
// handler fails at once, with no retry.
const givesUpDAGFile = `dag_id: gives_up
tasks:
  - task_id: load
    operator: sensor
    trigger:
      type: command
      command: |
        i=$((WEIR_STREAM_LAST_INDEX + 1)); while true; do echo "{\"n\": $i}"; i=$((i + 1)); sleep 0.02; done
    handle_command: exit 3
`

// TestStreamHandlerFailureClosesItsStream: when a streaming operator
// fails with no retry left, its stream is closed naming why, so its
// endless trigger stops producing (its next append is refused).
func TestStreamHandlerFailureClosesItsStream(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, env []string) {
		s, run := runToEnd(t, env, "gives_up", givesUpDAGFile)
		if run.State != core.RunFailed {
			t.Fatalf("run = %s, want failed", run.State)
		}
		path := "/api/v2/streams/" + url.PathEscape(core.TaskStreamID(run.ID, "load"))
		var st core.Stream
		wait.Until(t, time.Minute, "the failed handler's stream to close", func() bool {
			s.api.Get(path, &st)
			return st.Closed
		})
		if !strings.Contains(st.Error, `"load" ended failed`) {
			t.Errorf("stream error = %q, want it to name the failed task", st.Error)
		}
		var again core.Stream
		s.api.Get(path, &again)
		if again.NextIndex != st.NextIndex {
			t.Errorf("the closed stream grew from %d to %d events", st.NextIndex, again.NextIndex)
		}
	})
}
