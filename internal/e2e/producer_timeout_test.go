package e2e

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
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

// cappedDAG: "fetch" prints 20 pages at once, writes its pid to pidFile
// and then produces nothing for an hour; "insert" iterates over it.
func cappedDAG(pidFile string) string {
	return fmt.Sprintf(`dag_id: capped
tasks:
  - task_id: fetch
    operator: sensor
    trigger:
      type: command
      command: |
        for i in $(seq 1 20); do echo "{\"page\": $i}"; done
        echo $$ > %q
        sleep 3600
  - task_id: insert
    operator: bash
    iterate: fetch
    bash_command: echo "inserted page {{ .map_args.item.page }}"
  - task_id: report
    operator: bash
    depends_on: [insert]
    bash_command: echo report
`, pidFile)
}

// TestExpansionPastItsCapFailsAndStopsTheProducer: with [scheduler]
// max_map_length 5, a producer that sends 20 items gets 5 instances of
// its iterating task; the task fails, the report is upstream_failed, the
// expansion (REST API) is closed with an error naming the cap, and the
// producer is stopped — the sensor failed with the same reason and its
// trigger's process ended. On each engine.
func TestExpansionPastItsCapFailsAndStopsTheProducer(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, env []string) {
		pidFile := filepath.Join(t.TempDir(), "trigger.pid")
		s, run := runToEnd(t, append(env, "WEIR__SCHEDULER__MAX_MAP_LENGTH=5"), "capped", cappedDAG(pidFile))
		if run.State != core.RunFailed {
			t.Fatalf("run = %s, want failed:\n%s", run.State, s.api.DescribeRun("capped", "r1", run))
		}
		pid := waitPIDFile(t, pidFile)
		waitFor(t, "the stopped producer's trigger process to end", func() (bool, string) {
			return processGone(pid), fmt.Sprintf("pid %d still running", pid)
		})
		var e struct {
			Items     int64  `json:"items"`
			Instances int    `json:"instances"`
			Open      bool   `json:"open"`
			Error     string `json:"error"`
		}
		s.api.Get(runPath("capped", "r1")+"/taskInstances/insert/expansion", &e)
		const want = `task "insert" iterates over more than 5 items ([scheduler] max_map_length 5)`
		if e.Instances != 5 || e.Open || !strings.Contains(e.Error, want) {
			t.Errorf("expansion = %+v, want 5 instances, closed, with an error naming the cap", e)
		}
		var tis struct {
			TaskInstances []core.TaskInstance `json:"task_instances"`
		}
		s.api.Get(runPath("capped", "r1")+"/taskInstances?limit=100", &tis)
		got := map[string]core.TIState{}
		mapped := 0
		for _, ti := range tis.TaskInstances {
			if ti.MapIndex >= 0 {
				mapped++
				continue
			}
			got[ti.TaskID] = ti.State
		}
		if mapped != 5 || got["insert"] != core.TIFailed || got["report"] != core.TIUpstreamFailed || got["fetch"] != core.TIFailed {
			t.Errorf("%d mapped instances, states %v: want 5, insert and fetch failed, report upstream_failed", mapped, got)
		}
		if log := s.api.Log("capped", "r1", "fetch", 1); !strings.Contains(log, want) {
			t.Errorf("the producer's log does not name the cap:\n%s", log)
		}
	})
}
