package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/pgtest"
)

// streamTrials is how many times TestStreamSurvivesTriggererSIGKILL kills
// a triggerer mid-stream.
const streamTrials = 10

// streamKillEvents is the length of each trial's stream.
const streamKillEvents = 60

// streamKillDAGFile: a streaming operator whose command trigger prints
// events n = 1..60, one every 20 ms, resuming after the stream's last
// index, and whose handler appends each n to a file of its run and
// acknowledges it.
const streamKillDAGFile = `dag_id: killed
tasks:
  - task_id: load
    operator: sensor
    env:
      OUT: %[1]s
    trigger:
      type: command
      command: |
        for i in $(seq $((WEIR_STREAM_LAST_INDEX + 1)) %[2]d); do echo "{\"n\": $((i + 1))}"; sleep 0.02; done
    handle_command: |
      while read -r ev; do
        echo "${ev//[^0-9]/}" >> "$OUT/$WEIR_RUN_ID"
        echo ok >&3
      done
`

// TestStreamSurvivesTriggererSIGKILL runs every role as its own process
// on PostgreSQL and, in each of ten trials, SIGKILLs the triggerer
// running a stream's trigger mid-stream and starts another: the new one
// takes the trigger over and resumes after the last persisted event, so
// each stream holds events 1..60 once each, in order (none lost, none
// twice), and the streaming operator handling it — which went on reading
// through the outage — handled each once, in order, on its first try.
func TestStreamSurvivesTriggererSIGKILL(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	home, dags, out := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "killed.yaml"), fmt.Sprintf(streamKillDAGFile, out, streamKillEvents-1))
	env, api := startPostgresRoles(t, dsn, home, dags, "WEIR__TRIGGERER__HEARTBEAT_INTERVAL=1s")
	api.WaitDAG("killed")
	triggerer := startProc(t, "triggerer 0", env, "triggerer", "--home", home)
	for trial := 1; trial <= streamTrials; trial++ {
		runID := fmt.Sprintf("r%02d", trial)
		run := api.Trigger("killed", runID, nil)
		path := "/api/v2/streams/" + url.PathEscape(core.TaskStreamID(run.ID, "load"))
		var st core.Stream
		waitFor(t, "trial "+runID+": the stream to be under way", func() (bool, string) {
			st = core.Stream{}
			status, b := api.Do("GET", path, nil)
			if status != 200 || json.Unmarshal(b, &st) != nil {
				return false, fmt.Sprintf("status %d", status)
			}
			return st.NextIndex >= 5, fmt.Sprintf("%d events, closed %v", st.NextIndex, st.Closed)
		})
		if st.Closed {
			t.Fatalf("trial %s: the stream closed before the kill (%d events): make it longer", runID, st.NextIndex)
		}
		triggerer.Signal(t, syscall.SIGKILL)
		triggerer.WaitExit(t)
		triggerer = startProc(t, fmt.Sprintf("triggerer %d", trial), env, "triggerer", "--home", home)
		if got := api.WaitRunDone("killed", runID); got.State != core.RunSuccess {
			t.Fatalf("trial %s: run = %s, want success:\n%s", runID, got.State, api.DescribeRun("killed", runID, got))
		}
		var page struct {
			Events []core.StreamEvent `json:"events"`
		}
		api.Get(path+"/events?limit=1000", &page)
		var got []string
		for _, e := range page.Events {
			got = append(got, strings.Trim(string(e.Payload), `{}"n: `))
		}
		handled, err := os.ReadFile(filepath.Join(out, runID))
		if err != nil {
			t.Fatal(err)
		}
		want := make([]string, streamKillEvents)
		for i := range want {
			want[i] = fmt.Sprint(i + 1)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("trial %s (killed at %d events): the stream holds %v, want 1..%d once each", runID, st.NextIndex, got, streamKillEvents)
		}
		if h := strings.Fields(string(handled)); strings.Join(h, " ") != strings.Join(want, " ") {
			t.Errorf("trial %s (killed at %d events): handled %v, want 1..%d once each, in order", runID, st.NextIndex, h, streamKillEvents)
		}
		var ti core.TaskInstance
		api.Get(runPath("killed", runID)+"/taskInstances/load", &ti)
		if ti.TryNumber != 1 {
			t.Errorf("trial %s: load succeeded on try %d, want its first", runID, ti.TryNumber)
		}
	}
}
