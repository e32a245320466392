package job

import (
	"cmp"
	"slices"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// The roles whose processes write job rows. WorkerRole is the fifth.
const (
	SchedulerRole    = "scheduler"
	DagProcessorRole = "dag-processor"
	TriggererRole    = "triggerer"
	APIServerRole    = "api-server"
)

// Roles are every role of a deployment, in the order health listings show
// them (rows of any other role follow by name).
var Roles = []string{SchedulerRole, DagProcessorRole, TriggererRole, APIServerRole, WorkerRole}

// Instance states in a health listing.
const (
	// StateHealthy: the process beat within its threshold (HealthyWithin).
	StateHealthy = "healthy"
	// StateStale: it did not; the process is stopped, dead, or cut off
	// from the database. Its row is pruned after [core] job_retention.
	StateStale = "stale"
)

// Instance is one process's job row judged at a moment.
type Instance struct {
	core.Job
	// State is StateHealthy or StateStale.
	State string
	// Age is how long ago its latest heartbeat was written (never negative).
	Age time.Duration
}

// RoleHealth sums up the processes of one role.
type RoleHealth struct {
	Role string
	// Healthy counts the role's healthy processes, Total all its rows.
	Healthy, Total int
	// Latest is the newest heartbeat of the role; nil when it has no row.
	Latest *time.Time
}

// Health is a deployment's liveness as its job rows tell it.
type Health struct {
	// Roles lists every role of Roles, then any other role found, by name.
	Roles []RoleHealth
	// Instances lists every row in the order of Roles, then by host and id.
	Instances []Instance
}

// Role returns the summary of role (zero counts when it is unknown).
func (h *Health) Role(role string) RoleHealth {
	for _, r := range h.Roles {
		if r.Role == role {
			return r
		}
	}
	return RoleHealth{Role: role}
}

// HealthyWithin is how old a process's latest heartbeat may be while it
// counts as healthy: two of its own heartbeat intervals (StaleAfter), and
// never less than floor (the health threshold, 30 s by default), so that
// a role that beats every second is not shown stale by one slow write.
func HealthyWithin(j *core.Job, floor time.Duration) time.Duration {
	if j.Interval <= 0 {
		return max(floor, StaleAfter(0))
	}
	return max(floor, StaleAfter(j.Interval))
}

// Judge reads the job rows at now (floor as in HealthyWithin).
func Judge(jobs []core.Job, now time.Time, floor time.Duration) Health {
	ins := make([]Instance, 0, len(jobs))
	for _, j := range jobs {
		age := max(now.Sub(j.Heartbeat), 0)
		in := Instance{Job: j, State: StateStale, Age: age}
		if age <= HealthyWithin(&j, floor) {
			in.State = StateHealthy
		}
		ins = append(ins, in)
	}
	return Summarize(ins)
}

// Summarize groups instances already judged (by Judge, or by an
// api-server's health listing) by role and orders them.
func Summarize(ins []Instance) Health {
	h := Health{Instances: ins}
	byRole := map[string]int{}
	for _, r := range Roles {
		byRole[r] = len(h.Roles)
		h.Roles = append(h.Roles, RoleHealth{Role: r})
	}
	var extra []string
	for _, in := range ins {
		if _, ok := byRole[in.Role]; !ok && !slices.Contains(extra, in.Role) {
			extra = append(extra, in.Role)
		}
	}
	slices.Sort(extra)
	for _, r := range extra {
		byRole[r] = len(h.Roles)
		h.Roles = append(h.Roles, RoleHealth{Role: r})
	}
	for _, in := range ins {
		r := &h.Roles[byRole[in.Role]]
		r.Total++
		if in.State == StateHealthy {
			r.Healthy++
		}
		if r.Latest == nil || in.Heartbeat.After(*r.Latest) {
			t := in.Heartbeat.UTC()
			r.Latest = &t
		}
	}
	slices.SortStableFunc(h.Instances, func(a, b Instance) int {
		return cmp.Or(cmp.Compare(byRole[a.Role], byRole[b.Role]), cmp.Compare(a.Hostname, b.Hostname), cmp.Compare(a.ID, b.ID))
	})
	return h
}
