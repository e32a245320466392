// Package jobservicetest runs the example job service (examples/jobservice),
// the "remote job system" of the resumable-job examples, as a real process
// beside the weir under test: it outlives a killed worker, as a real
// external system would.
package jobservicetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Service is a running job service.
type Service struct {
	// URL is its base URL, http://127.0.0.1:port.
	URL  string
	t    testing.TB
	http *http.Client
}

var (
	buildOnce sync.Once
	bin       string
	errBuild  error
)

// build compiles examples/jobservice once per test binary.
func build() (string, error) {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "weir-jobservice-")
		if err != nil {
			errBuild = fmt.Errorf("build jobservice: %w", err)
			return
		}
		bin = filepath.Join(dir, "jobservice")
		cmd := exec.Command("go", "build", "-o", bin, "github.com/weirflow/weir/examples/jobservice")
		if out, err := cmd.CombinedOutput(); err != nil {
			errBuild = fmt.Errorf("go build examples/jobservice: %w\n%s", err, out)
		}
	})
	return bin, errBuild
}

// syncBuffer collects the service's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listening = regexp.MustCompile(`listening on (http://\S+)`)

// Start builds (once) and starts the job service on a free loopback port
// and waits until it listens; it is killed when the test ends.
func Start(t testing.TB) *Service {
	t.Helper()
	path, err := build()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "-addr", "127.0.0.1:0")
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start jobservice: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("----- output of jobservice -----\n%s----- end of jobservice -----", out)
		}
	})
	deadline := time.Now().Add(time.Minute)
	for {
		if m := listening.FindStringSubmatch(out.String()); m != nil {
			return &Service{URL: m[1], t: t, http: &http.Client{Timeout: 30 * time.Second}}
		}
		select {
		case <-exited:
			t.Fatalf("jobservice exited before listening:\n%s", out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobservice did not print its address within a minute:\n%s", out)
		}
	}
}

// Submissions returns how many jobs were ever submitted, and each job as
// "id=state".
func (s *Service) Submissions() (int, []string) {
	s.t.Helper()
	resp, err := s.http.Get(s.URL + "/jobs")
	if err != nil {
		s.t.Fatalf("GET /jobs: %v", err)
	}
	defer resp.Body.Close()
	var list struct {
		Submissions int `json:"submissions"`
		Jobs        []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"jobs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		s.t.Fatalf("GET /jobs: %v", err)
	}
	var jobs []string
	for _, j := range list.Jobs {
		jobs = append(jobs, j.ID+"="+j.State)
	}
	return list.Submissions, jobs
}

// Finish ends a job now with state "succeeded" or "failed".
func (s *Service) Finish(id, state string) {
	s.t.Helper()
	body := bytes.NewBufferString(fmt.Sprintf(`{"state": %q}`, state))
	resp, err := s.http.Post(s.URL+"/jobs/"+id+"/finish", "application/json", body)
	if err != nil {
		s.t.Fatalf("finish %s: %v", id, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		s.t.Fatalf("finish %s: status %d", id, resp.StatusCode)
	}
}
