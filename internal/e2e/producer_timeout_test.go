package e2e

import (
	"fmt"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// slowProducerDAG: "fetch" is a producer sensor whose command trigger
// writes its pid to pidFile, sends one page and then produces nothing for
// an hour; its deferral times out after 2 s, and its retry is an hour
// away. "insert" iterates over it.
func slowProducerDAG(pidFile string) string {
	return fmt.Sprintf(`dag_id: slow_producer
tasks:
  - task_id: fetch
    operator: sensor
    timeout: 2s
    retries: 1
    retry_delay: 1h
    trigger:
      type: command
      command: |
        echo $$ > %q
        echo '{"page": 1}'
        sleep 3600
  - task_id: insert
    operator: bash
    iterate: fetch
    bash_command: echo "inserted page {{ .map_args.item.page }}"
`, pidFile)
}

// TestTimedOutProducerStopsItsTrigger: when a producer sensor's deferral
// times out (its retry an hour away), its trigger is deleted and its
// triggerer stops running it at its next reconcile — the trigger's
// process ends — rather than producing on for a try that no longer
// waits; the stream stays open, with the page sent so far, for the
// retry to resume. On each engine.
func TestTimedOutProducerStopsItsTrigger(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, env []string) {
		dags, home := t.TempDir(), t.TempDir()
		pidFile := filepath.Join(t.TempDir(), "trigger.pid")
		writeFile(t, filepath.Join(dags, "slow_producer.yaml"), slowProducerDAG(pidFile))
		s := startStandalone(t, home, dags, env...)
		s.api.WaitDAG("slow_producer")
		s.api.Trigger("slow_producer", "r1", nil)
		pid := waitPIDFile(t, pidFile)
		var fetch core.TaskInstance
		waitFor(t, "fetch to time out", func() (bool, string) {
			s.api.Get(runPath("slow_producer", "r1")+"/taskInstances/fetch", &fetch)
			return fetch.State == core.TIUpForRetry, string(fetch.State)
		})
		waitFor(t, "the timed-out producer's trigger process to end", func() (bool, string) {
			return processGone(pid), fmt.Sprintf("pid %d still running", pid)
		})
		var run core.DagRun
		s.api.Get(runPath("slow_producer", "r1"), &run)
		var st core.Stream
		s.api.Get("/api/v2/streams/"+url.PathEscape(core.TaskStreamID(run.ID, "fetch")), &st)
		if st.Closed || st.TriggerID != 0 || st.NextIndex != 1 {
			t.Errorf("stream = %+v, want it open with its one page and no trigger (the retry's trigger resumes it)", st)
		}
	})
}
