// Command jobservice is a tiny stand-in for an external job system (a Spark
// or Databricks API) for the resumable-job examples (docs/resumable-jobs.md).
// It keeps jobs in memory, so it outlives any worker that submitted them:
//
//	go run ./examples/jobservice -addr 127.0.0.1:8765 -duration 10s
//
// The API (JSON):
//
//	POST /jobs                  {"seconds": n} (optional) → 201 {"id": "job-1", "state": "running"}
//	GET  /jobs/{id}             → 200 the job; 404 when unknown
//	GET  /jobs/{id}/result      → 200 {"job_id": ..., "rows": ...} once succeeded; 409 before
//	POST /jobs/{id}/finish      {"state": "succeeded"|"failed"} ends the job now
//	GET  /jobs                  → {"submissions": n, "jobs": [...]}
//
// A job is "running" until its seconds have passed, then "succeeded".
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8765", "address to listen on (port 0 = any free port)")
	duration := flag.Duration("duration", 10*time.Second, "how long a job runs when its submission gives no seconds")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("jobservice: %v", err)
	}
	// Tests read the address from this line.
	fmt.Printf("jobservice listening on http://%s\n", ln.Addr())
	srv := &http.Server{Handler: newService(*duration).routes(), ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "jobservice:", err)
		os.Exit(1)
	}
}

// job is one submitted job as the API shows it.
type job struct {
	ID          string    `json:"id"`
	State       string    `json:"state"` // running, succeeded or failed
	SubmittedAt time.Time `json:"submitted_at"`
	FinishesAt  time.Time `json:"finishes_at"`
	ended       bool      // finished early through /finish
}

// service holds the jobs; every method is safe for concurrent use.
type service struct {
	mu       sync.Mutex
	duration time.Duration
	jobs     map[string]*job
	next     int
}

func newService(d time.Duration) *service {
	return &service{duration: d, jobs: map[string]*job{}}
}

func (s *service) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /jobs", s.submit)
	mux.HandleFunc("GET /jobs", s.list)
	mux.HandleFunc("GET /jobs/{id}", s.get)
	mux.HandleFunc("GET /jobs/{id}/result", s.result)
	mux.HandleFunc("POST /jobs/{id}/finish", s.finish)
	return mux
}

// refresh moves a running job whose time is up to succeeded; s.mu is held.
func (s *service) refresh(j *job) {
	if !j.ended && j.State == "running" && !time.Now().Before(j.FinishesAt) {
		j.State = "succeeded"
	}
}

func (s *service) submit(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Seconds *float64 `json:"seconds"`
	}
	if r.ContentLength != 0 {
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body: " + err.Error()})
			return
		}
	}
	d := s.duration
	if in.Seconds != nil {
		d = time.Duration(*in.Seconds * float64(time.Second))
	}
	s.mu.Lock()
	s.next++
	now := time.Now().UTC()
	j := &job{ID: fmt.Sprintf("job-%d", s.next), State: "running", SubmittedAt: now, FinishesAt: now.Add(d)}
	s.jobs[j.ID] = j
	out := *j
	s.mu.Unlock()
	log.Printf("jobservice: submitted %s (runs %s)", j.ID, d)
	writeJSON(w, http.StatusCreated, out)
}

// lookup returns a copy of the job (refreshed), or writes 404.
func (s *service) lookup(w http.ResponseWriter, id string) (job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("no job %q", id)})
		return job{}, false
	}
	s.refresh(j)
	return *j, true
}

func (s *service) get(w http.ResponseWriter, r *http.Request) {
	if j, ok := s.lookup(w, r.PathValue("id")); ok {
		writeJSON(w, http.StatusOK, j)
	}
}

func (s *service) result(w http.ResponseWriter, r *http.Request) {
	j, ok := s.lookup(w, r.PathValue("id"))
	if !ok {
		return
	}
	if j.State != "succeeded" {
		writeJSON(w, http.StatusConflict, map[string]string{"error": fmt.Sprintf("job %s is %s, not succeeded", j.ID, j.State)})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"job_id": j.ID, "rows": 1000})
}

func (s *service) finish(w http.ResponseWriter, r *http.Request) {
	var in struct {
		State string `json:"state"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || (in.State != "succeeded" && in.State != "failed") {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": `body must be {"state": "succeeded"} or {"state": "failed"}`})
		return
	}
	s.mu.Lock()
	j, ok := s.jobs[r.PathValue("id")]
	if ok {
		j.State, j.ended = in.State, true
	}
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("no job %q", r.PathValue("id"))})
		return
	}
	log.Printf("jobservice: %s finished: %s", j.ID, in.State)
	w.WriteHeader(http.StatusNoContent)
}

func (s *service) list(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	out := struct {
		Submissions int   `json:"submissions"`
		Jobs        []job `json:"jobs"`
	}{Submissions: s.next, Jobs: []job{}}
	for _, j := range s.jobs {
		s.refresh(j)
		out.Jobs = append(out.Jobs, *j)
	}
	s.mu.Unlock()
	sort.Slice(out.Jobs, func(a, b int) bool { return out.Jobs[a].SubmittedAt.Before(out.Jobs[b].SubmittedAt) })
	writeJSON(w, http.StatusOK, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client went away; nothing to do
}
