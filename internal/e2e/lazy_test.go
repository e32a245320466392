package e2e

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// lazyDAGFile: "fetch" is a deferrable sensor whose command trigger prints
// 100 pages, one every 50 ms, resuming after the stream's last index;
// "insert" iterates over it; "report" runs once every insert is done.
const lazyDAGFile = `dag_id: lazy
tasks:
  - task_id: fetch
    operator: sensor
    trigger:
      type: command
      command: |
        for i in $(seq $((WEIR_STREAM_LAST_INDEX + 1)) 99); do echo "{\"page\": $i}"; sleep 0.05; done
  - task_id: insert
    operator: bash
    iterate: fetch
    bash_command: echo "inserted page {{ .map_args.item.page }}"
  - task_id: report
    operator: bash
    depends_on: [insert]
    bash_command: echo report
`

// TestLazyExpansionStartsBeforeTheStreamEnds runs a 100-event stream from
// a trigger on each engine: the first mapped instances start before the
// 10th event is produced (timestamps of the instances and the envelopes),
// each instance gets its own item, and the downstream task runs once,
// after the last event and after every instance.
func TestLazyExpansionStartsBeforeTheStreamEnds(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, env []string) {
		s := runOnce(t, env, "lazy", lazyDAGFile)
		var x core.XCom
		s.api.Get(runPath("lazy", "r1")+"/taskInstances/fetch/xcomEntries/return_value", &x)
		var end struct {
			StreamID string `json:"stream_id"`
			Events   int    `json:"events"`
		}
		if err := json.Unmarshal(x.Value, &end); err != nil || end.Events != 100 || end.StreamID == "" {
			t.Fatalf("fetch returned %s (%v), want its stream with 100 events", x.Value, err)
		}
		var page struct {
			Events []core.StreamEvent `json:"events"`
		}
		s.api.Get("/api/v2/streams/"+url.PathEscape(end.StreamID)+"/events?limit=1000", &page)
		if len(page.Events) != 100 || !page.Events[99].IsLast {
			t.Fatalf("%d envelopes, want 100 with the last is_last", len(page.Events))
		}
		var firstStart, lastEnd time.Time
		n := 0
		var report core.TaskInstance
		for _, ti := range s.api.TaskInstances("lazy", "r1") {
			switch {
			case ti.TaskID == "insert" && ti.MapIndex >= 0:
				n++
				if ti.State != core.TISuccess || ti.StartDate == nil || ti.EndDate == nil {
					t.Fatalf("insert[%d] = %s, want success", ti.MapIndex, ti.State)
				}
				if firstStart.IsZero() || ti.StartDate.Before(firstStart) {
					firstStart = *ti.StartDate
				}
				if ti.EndDate.After(lastEnd) {
					lastEnd = *ti.EndDate
				}
			case ti.TaskID == "insert":
				t.Fatalf("the placeholder of insert is still there (%s)", ti.State)
			case ti.TaskID == "report":
				report = ti
			}
		}
		if n != 100 {
			t.Fatalf("%d instances of insert, want 100", n)
		}
		if tenth := page.Events[9].CreatedAt; !firstStart.Before(tenth) {
			t.Errorf("the first insert started at %s, not before the 10th event was produced (%s)", firstStart, tenth)
		}
		if report.TryNumber != 1 || report.StartDate == nil || report.StartDate.Before(page.Events[99].CreatedAt) || report.StartDate.Before(lastEnd) {
			t.Errorf("report = try %d started %v; want one try after the last event (%s) and the last insert (%s)",
				report.TryNumber, report.StartDate, page.Events[99].CreatedAt, lastEnd)
		}
		var ti core.TaskInstance
		s.api.Get(runPath("lazy", "r1")+"/taskInstances/insert/37", &ti)
		if !strings.Contains(string(ti.MapArgs), `"page":37`) {
			t.Errorf("insert[37] has map args %s, want item page 37", ti.MapArgs)
		}
	})
}

// runOnce runs the DAG dagID of the DAG file content once (run r1) in a
// fresh standalone with env, and fails the test unless the run succeeds.
func runOnce(t *testing.T, env []string, dagID, content string) *standalone {
	t.Helper()
	s, run := runToEnd(t, env, dagID, content)
	if run.State != core.RunSuccess {
		t.Fatalf("run = %s, want success:\n%s", run.State, s.api.DescribeRun(dagID, "r1", run))
	}
	return s
}

// runToEnd runs the DAG dagID of the DAG file content once (run r1) in a
// fresh standalone with env and returns the run once it finished.
func runToEnd(t *testing.T, env []string, dagID, content string) (*standalone, core.DagRun) {
	t.Helper()
	dags, home := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, dagID+".yaml"), content)
	s := startStandalone(t, home, dags, env...)
	s.api.WaitDAG(dagID)
	s.api.Trigger(dagID, "r1", nil)
	return s, s.api.WaitRunDone(dagID, "r1")
}
