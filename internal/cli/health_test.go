package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// weir health lists every role instance with its host, version, heartbeat
// and state, the same from the database and through the REST API, and
// exits 1 once no scheduler is healthy.
func TestHealthListsEveryRole(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s *surfaces) {
		now := time.Now().UTC().Truncate(time.Second)
		beat := func(j core.Job) {
			t.Helper()
			if err := s.st.JobHeartbeat(t.Context(), &j); err != nil {
				t.Fatal(err)
			}
		}
		beat(core.Job{ID: "sched-1", Role: "scheduler", Hostname: "m1", PID: 11, StartedAt: now.Add(-time.Hour), Heartbeat: now,
			Interval: time.Second, Version: "1.4.0"})
		beat(core.Job{ID: "proc-9", Role: "worker", Hostname: "m3", PID: 31, StartedAt: now.Add(-time.Hour),
			Heartbeat: now.Add(-10 * time.Minute), WorkerID: "gpu-1", Interval: 5 * time.Second, Version: "1.3.9"})
		lo, le, lc := weirIn(t, s.env, "", "health")
		ro, re, rc := weirIn(t, s.remoteEnv(), "", "health")
		if lo != ro || le != re || lc != rc {
			t.Errorf("weir health differs:\nlocal  (exit %d): %q %q\nremote (exit %d): %q %q", lc, lo, le, rc, ro, re)
		}
		if lc != 0 {
			t.Errorf("weir health exit %d with a healthy scheduler: %s", lc, le)
		}
		for _, want := range []string{"scheduler      1 of 1", "dag-processor  0 of 0", "worker         0 of 1",
			"proc-9   gpu-1   m3    31   1.3.9", "stale", "sched-1  -       m1    11   1.4.0"} {
			if !strings.Contains(lo, want) {
				t.Errorf("weir health lacks %q:\n%s", want, lo)
			}
		}
		beat(core.Job{ID: "sched-1", Role: "scheduler", Hostname: "m1", PID: 11, Heartbeat: now.Add(-time.Hour), Interval: time.Second})
		for _, env := range [][]string{s.env, s.remoteEnv()} {
			out, errOut, code := weirIn(t, env, "", "health")
			if code != 1 || !strings.Contains(errOut, "no scheduler is healthy") || !strings.Contains(out, "scheduler      0 of 1") {
				t.Errorf("stale scheduler: exit %d, %q\n%s", code, errOut, out)
			}
		}
	})
}
