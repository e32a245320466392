package job_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/job"
)

// Judge lists every role (the five known ones even without a process,
// then others by name), counts each role's healthy processes and orders
// the instances by role, host and id; a process is stale once its latest
// heartbeat is older than two of its intervals and than the floor.
func TestJudge(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	row := func(id, role, host string, ago, every time.Duration) core.Job {
		return core.Job{ID: id, Role: role, Hostname: host, Heartbeat: now.Add(-ago), Interval: every}
	}
	tests := []struct {
		name          string
		jobs          []core.Job
		floor         time.Duration
		roles, states []string
	}{
		{name: "nothing reported", floor: 30 * time.Second,
			roles: []string{"scheduler 0/0", "dag-processor 0/0", "triggerer 0/0", "api-server 0/0", "worker 0/0"}},
		{name: "floor keeps a fast beater healthy", floor: 30 * time.Second,
			jobs:   []core.Job{row("s1", "scheduler", "h", 20*time.Second, time.Second)},
			roles:  []string{"scheduler 1/1", "dag-processor 0/0", "triggerer 0/0", "api-server 0/0", "worker 0/0"},
			states: []string{"scheduler s1 healthy"}},
		{name: "two intervals past the floor is stale; no interval uses the default", floor: 0,
			jobs: []core.Job{
				row("w2", "worker", "b", 11*time.Second, 5*time.Second), row("w1", "worker", "a", 10*time.Second, 5*time.Second),
				row("x", "custom", "h", 19*time.Second, 0), row("y", "custom", "h", 21*time.Second, 0),
				row("t", "triggerer", "h", time.Hour, 5*time.Second),
			},
			roles:  []string{"scheduler 0/0", "dag-processor 0/0", "triggerer 0/1", "api-server 0/0", "worker 1/2", "custom 1/2"},
			states: []string{"triggerer t stale", "worker w1 healthy", "worker w2 stale", "custom x healthy", "custom y stale"}},
		{name: "a heartbeat from the future is age 0", floor: 0,
			jobs:   []core.Job{row("a", "api-server", "h", -time.Minute, time.Second)},
			roles:  []string{"scheduler 0/0", "dag-processor 0/0", "triggerer 0/0", "api-server 1/1", "worker 0/0"},
			states: []string{"api-server a healthy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := job.Judge(tt.jobs, now, tt.floor)
			var roles, states []string
			for _, r := range h.Roles {
				roles = append(roles, fmt.Sprintf("%s %d/%d", r.Role, r.Healthy, r.Total))
			}
			for _, in := range h.Instances {
				states = append(states, in.Role+" "+in.ID+" "+in.State)
				if in.Age < 0 {
					t.Errorf("%s: negative age %s", in.ID, in.Age)
				}
			}
			if diff := cmp.Diff(tt.roles, roles); diff != "" {
				t.Errorf("roles (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.states, states); diff != "" {
				t.Errorf("instances (-want +got):\n%s", diff)
			}
		})
	}
	h := job.Judge([]core.Job{row("a", "worker", "h", time.Minute, time.Second), row("b", "worker", "h", time.Second, time.Second)}, now, 0)
	if l := h.Role("worker").Latest; l == nil || !l.Equal(now.Add(-time.Second)) {
		t.Errorf("latest worker heartbeat = %v, want the newer row's", l)
	}
	if r := h.Role("nobody"); r.Total != 0 || r.Latest != nil {
		t.Errorf("unknown role = %+v, want empty", r)
	}
}
