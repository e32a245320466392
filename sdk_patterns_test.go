package weir

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/testutil/jobservicetest"
)

// The task-state patterns of the seeds, Go versions (examples/sdk
// resumable.go and patterns.go), run by the built example binary; called
// from TestSDKProgramEndToEnd, which builds it.

// goCheckpointResume: go_checkpoint_resume's ingest fails at page 8 on try 1
// and try 2 loads pages 8-10 only, from its checkpoint (docs/requirements.md#ts-1).
func goCheckpointResume(t *testing.T, bin string) {
	home := t.TempDir()
	assertRows(t, dagsTest(t, bin, home, "go_checkpoint_resume"), map[string]string{"ingest": "success 2"})
	st := openStore(t, home)
	if v := returnValue(t, st, "go_checkpoint_resume", "ingest", -1); v != `{"pages_loaded":[8,9,10],"resumed_after":7,"try":2}` {
		t.Errorf("ingest returned %s, want try 2 resuming after page 7", v)
	}
	if got := taskStateOf(t, st, "go_checkpoint_resume"); fmt.Sprint(got) != "[last_page=10 never=false]" {
		t.Errorf("task state = %v, want last_page 10", got)
	}
}

// goProgressReport: go_progress_report's progress is readable over the REST
// API while the task runs (held half way by its pause file), then reaches
// 6 of 6 (docs/requirements.md#ts-1, #ts-6; the seeds' progress pattern).
func goProgressReport(t *testing.T, bin string) {
	s := startSDK(t, bin, t.TempDir())
	pause := filepath.Join(t.TempDir(), "continue")
	const dag, task = "go_progress_report", "process_items"
	s.trigger(dag, "progress", map[string]any{"pause_file": pause})
	s.waitState(dag, "progress", task, "progress", `{"done":3,"total":6}`)
	var ti struct {
		State string `json:"state"`
	}
	s.get(runURL(dag, "progress")+"/taskInstances/"+task, &ti)
	if ti.State != "running" {
		t.Errorf("%s is %s while paused, want running", task, ti.State)
	}
	if err := os.WriteFile(pause, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.waitRunSuccess(dag, "progress")
	s.waitState(dag, "progress", task, "progress", `{"done":6,"total":6}`)
}

// goResumeAfterKill: go_resume_external_job (weir.RunResumable) against the
// example job service, with the SDK binary's standalone SIGKILLed while try
// 1 polls. Try 2 reconnects to the same job: one submission, and the run
// succeeds with that job's result (docs/requirements.md#r-1).
func goResumeAfterKill(t *testing.T, bin string) {
	svc := jobservicetest.Start(t)
	home := t.TempDir()
	// A short heartbeat timeout fails the orphaned try soon after the restart.
	env := []string{"WEIR__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT=5s", "WEIR__WORKERS__HEARTBEAT_INTERVAL=1s"}
	const dag, runID, task = "go_resume_external_job", "resume", "run_job"
	s := startSDK(t, bin, home, env...)
	s.trigger(dag, runID, map[string]any{"job_service": svc.URL, "job_seconds": 3600})
	s.waitLog(dag, runID, task, 1, "job status") // submitted, id kept, polling
	s.waitState(dag, runID, task, "job_id", `"job-1"`)

	s.kill()
	s = startSDK(t, bin, home, env...)
	s.waitLog(dag, runID, task, 2, "reconnecting to the running external job")
	svc.Finish("job-1", "succeeded")
	s.waitRunSuccess(dag, runID)
	if n, jobs := svc.Submissions(); n != 1 {
		t.Errorf("the job service saw %d submissions (%v), want 1", n, jobs)
	}
	if v := returnValue(t, openStore(t, home), dag, task, -1); v != `{"job_id":"job-1","rows":1000}` {
		t.Errorf("run_job returned %s, want job-1's result", v)
	}
}

// sdkStack is the example binary's standalone, with an API client logged in.
type sdkStack struct {
	t    *testing.T
	cmd  *exec.Cmd
	api  string // http://host:port/api/v2
	c    *http.Client
	done chan struct{}
}

// startSDK runs `bin standalone` on home (no DAG folder: the Go DAGs only)
// with extra environment; it is killed when the test ends.
func startSDK(t *testing.T, bin, home string, env ...string) *sdkStack {
	t.Helper()
	s := &sdkStack{t: t, done: make(chan struct{})}
	s.cmd = exec.Command(bin, "standalone", "--home", home, "--dags", t.TempDir(), "--port", "0")
	s.cmd.Env = append(append(os.Environ(), unpausedNew), env...)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logPath := filepath.Join(t.TempDir(), "standalone.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("----- standalone output -----\n%s", b)
		}
	})
	var banner []byte
	s.poll("standalone's banner", func() bool {
		banner, _ = os.ReadFile(logPath)
		select {
		case <-s.done:
			t.Fatalf("standalone exited: %v", s.cmd.ProcessState)
		default:
		}
		_, after, found := strings.Cut(string(banner), "login:")
		return found && strings.Contains(after, "\n")
	})
	api, password := readBanner(t, bytes.NewReader(banner))
	s.api = api
	jar, _ := cookiejar.New(nil)
	s.c = &http.Client{Jar: jar, Timeout: 30 * time.Second}
	call(t, s.c, http.MethodPost, api+"/auth/login", fmt.Sprintf(`{"username":"admin","password":%q}`, password), nil)
	return s
}

// kill SIGKILLs the process group (Go tasks run inside it) and waits.
func (s *sdkStack) kill() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}

// poll waits for cond, for at most two minutes.
func (s *sdkStack) poll(what string, cond func() bool) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.t.Context(), 2*time.Minute)
	defer cancel()
	poll(ctx, s.t, what, cond)
}

func runURL(dagID, runID string) string { return "/dags/" + dagID + "/dagRuns/" + runID }

func (s *sdkStack) get(path string, out any) {
	s.t.Helper()
	call(s.t, s.c, http.MethodGet, s.api+path, "", out)
}

// tryGet is get that returns the status instead of failing on a non-2xx.
func (s *sdkStack) tryGet(path string, out any) int {
	resp, err := s.c.Get(s.api + path)
	if err != nil {
		return 0
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(out) != nil {
		return 0
	}
	return resp.StatusCode
}

// trigger waits for the DAG, unpauses it and starts a run with conf.
func (s *sdkStack) trigger(dagID, runID string, conf map[string]any) {
	s.t.Helper()
	var d struct{}
	s.poll("DAG "+dagID, func() bool { return s.tryGet("/dags/"+dagID, &d) == http.StatusOK })
	call(s.t, s.c, http.MethodPatch, s.api+"/dags/"+dagID, `{"is_paused": false}`, nil)
	body, _ := json.Marshal(map[string]any{"dag_run_id": runID, "conf": conf})
	call(s.t, s.c, http.MethodPost, s.api+"/dags/"+dagID+"/dagRuns", string(body), nil)
}

func (s *sdkStack) waitRunSuccess(dagID, runID string) {
	s.t.Helper()
	s.poll("run "+runID+" of "+dagID+" to succeed", func() bool {
		var r struct {
			State string `json:"state"`
		}
		s.get(runURL(dagID, runID), &r)
		if r.State == "failed" {
			s.t.Fatalf("run %s of %s failed", runID, dagID)
		}
		return r.State == "success"
	})
}

// waitState waits until a task-state key of an unmapped task holds want.
func (s *sdkStack) waitState(dagID, runID, taskID, key, want string) {
	s.t.Helper()
	s.poll(fmt.Sprintf("task state %s of %s to be %s", key, taskID, want), func() bool {
		var e struct {
			Value json.RawMessage `json:"value"`
		}
		return s.tryGet(runURL(dagID, runID)+"/taskInstances/"+taskID+"/state-store/"+key, &e) == http.StatusOK &&
			string(e.Value) == want
	})
}

// waitLog waits until one try's log of an unmapped task contains want.
func (s *sdkStack) waitLog(dagID, runID, taskID string, try int, want string) {
	s.t.Helper()
	s.poll(fmt.Sprintf("log of %s try %d to show %q", taskID, try, want), func() bool {
		var l struct {
			Content []string `json:"content"` // the log's lines
		}
		return s.tryGet(fmt.Sprintf("%s/taskInstances/%s/logs/%d", runURL(dagID, runID), taskID, try), &l) == http.StatusOK &&
			strings.Contains(strings.Join(l.Content, "\n"), want)
	})
}
