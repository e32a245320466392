package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// versionedDAG is a DAG whose first task waits (at most two minutes) for a
// gate file, so a run can be held open while the file changes; report
// echoes the version label.
func versionedDAG(gate, label, extraTask string) string {
	return fmt.Sprintf(`dag_id: versioned
schedule: null
tasks:
  - task_id: wait
    operator: bash
    bash_command: |
      for i in $(seq 1200); do [ -e %q ] && exit 0; sleep 0.1; done
      echo "gate never opened" >&2; exit 1
  - task_id: report
    operator: bash
    depends_on: wait
    bash_command: echo "report from %s"
%s`, gate, label, extraTask)
}

// TestStandaloneDagFolder changes and breaks files in a live DAG folder.
func TestStandaloneDagFolder(t *testing.T) {
	t.Parallel()
	dags := t.TempDir()
	gate := filepath.Join(t.TempDir(), "gate")
	writeFile(t, filepath.Join(dags, "versioned.yaml"), versionedDAG(gate, "version one", ""))
	writeFile(t, filepath.Join(dags, "steady.yaml"), `dag_id: steady
schedule: null
tasks:
  - task_id: only
    operator: bash
    bash_command: echo "steady as she goes"
`)
	s := startStandalone(t, t.TempDir(), dags)

	t.Run("a run keeps the DAG version it started with", func(t *testing.T) {
		t.Parallel()
		api := s.api.with(t)
		v1 := api.WaitDAG("versioned").LatestVersion
		if run := api.Trigger("versioned", "before-change", nil); run.DagVersionID != v1 {
			t.Errorf("new run has dag_version_id %d, want the latest, %d", run.DagVersionID, v1)
		}
		api.WaitTIState("versioned", "before-change", "wait", core.TIRunning)

		writeFile(t, filepath.Join(dags, "versioned.yaml"), versionedDAG(gate, "version two",
			"  - task_id: added\n    operator: bash\n    depends_on: report\n    bash_command: echo added\n"))
		var v2 int64
		waitFor(t, "a new version of DAG versioned", func() (bool, string) {
			v2 = api.WaitDAG("versioned").LatestVersion
			return v2 != v1, fmt.Sprintf("latest version still %d", v2)
		})
		writeFile(t, gate, "open")

		run1 := api.WaitRunSuccess("versioned", "before-change")
		if run1.DagVersionID != v1 {
			t.Errorf("run started before the change has dag_version_id %d, want %d", run1.DagVersionID, v1)
		}
		if log := api.Log("versioned", "before-change", "report", 1); !strings.Contains(log, "report from version one") {
			t.Errorf("report in the old run ran the new command; log:\n%s", log)
		}
		for _, ti := range api.TaskInstances("versioned", "before-change") {
			if ti.TaskID == "added" {
				t.Errorf("the old run got task %q of the new version", ti.TaskID)
			}
		}

		api.Trigger("versioned", "after-change", nil)
		run2 := api.WaitRunSuccess("versioned", "after-change")
		if run2.DagVersionID != v2 {
			t.Errorf("run started after the change has dag_version_id %d, want %d", run2.DagVersionID, v2)
		}
		if log := api.Log("versioned", "after-change", "report", 1); !strings.Contains(log, "report from version two") {
			t.Errorf("report in the new run did not run the new command; log:\n%s", log)
		}
		if ti := api.TaskInstance("versioned", "after-change", "added"); ti.State != core.TISuccess {
			t.Errorf("task added in the new version is %q, want success", ti.State)
		}
	})

	t.Run("a broken file is an import error and other DAGs still run", func(t *testing.T) {
		t.Parallel()
		api := s.api.with(t)
		api.WaitDAG("steady")
		broken := filepath.Join(dags, "broken.yaml")
		writeFile(t, broken, "dag_id: broken\nschedule: null\ntasks:\n  - task_id: t1\n    operator: teleport\n")
		// file:line:col of the bad operator value
		where := regexp.MustCompile(regexp.QuoteMeta(broken) + `:5:\d+: .*operator.*teleport`)

		var errs struct {
			ImportErrors []core.ImportError `json:"import_errors"`
		}
		waitFor(t, "an import error for broken.yaml", func() (bool, string) {
			api.Get("/api/v2/importErrors", &errs)
			for _, e := range errs.ImportErrors {
				if e.Filename == broken {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%+v", errs.ImportErrors)
		})
		for _, e := range errs.ImportErrors {
			if e.Filename == broken && !where.MatchString(e.Message) {
				t.Errorf("import error of %s = %q, want it to match %s", broken, e.Message, where)
			}
		}
		out := mustWeir(t, nil, "dags", "list-import-errors", "--home", s.home)
		if !where.MatchString(out) {
			t.Errorf("weir dags list-import-errors does not name %s:line:col and the field:\n%s", broken, out)
		}
		if status, body := api.Do("GET", "/api/v2/dags/broken", nil); status != 404 {
			t.Errorf("GET /dags/broken: status %d (%s), want 404: a broken file defines no DAG", status, body)
		}

		api.Trigger("steady", "next-to-broken", nil)
		api.WaitRunSuccess("steady", "next-to-broken")
		if log := api.Log("steady", "next-to-broken", "only", 1); !strings.Contains(log, "steady as she goes") {
			t.Errorf("log of steady's task lacks its output:\n%s", log)
		}
	})
}
