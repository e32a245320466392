package ui

import (
	"strconv"
	"time"

	"github.com/weirflow/weir/internal/job"
)

// roleHealth is one role's line of the admin page's health summary.
type roleHealth struct {
	Role    string
	Healthy int // processes with a recent heartbeat
	Total   int
	Latest  string // the newest heartbeat's age, "" for none
	// Status is "healthy", "unhealthy" or "none reported"; Icon goes with
	// it, so that colour never carries it alone.
	Status, Icon, Class string
}

// summarizeHealth groups the recorded processes by role, as job.Judge
// lists them (every role, healthy within two of its intervals and never
// less than within, the REST API's health threshold): how many are
// healthy and the newest heartbeat. A role is healthy when one of its
// processes is; a required role (the scheduler) without any is
// unhealthy, as GET /api/v2/monitor/health says.
func summarizeHealth(judged *job.Health, now time.Time) []roleHealth {
	out := make([]roleHealth, 0, len(judged.Roles))
	for _, r := range judged.Roles {
		h := roleHealth{Role: r.Role, Healthy: r.Healthy, Total: r.Total}
		switch {
		case h.Healthy > 0:
			h.Status, h.Icon, h.Class = "healthy", "✓", "s-success"
		case h.Total > 0 || r.Role == job.SchedulerRole:
			h.Status, h.Icon, h.Class = "unhealthy", "✗", "s-failed"
		default:
			h.Status, h.Icon, h.Class = "none reported", "·", "s-none"
		}
		if r.Latest != nil {
			h.Latest = roundDur(max(now.Sub(*r.Latest), 0)) + " ago"
		}
		out = append(out, h)
	}
	return out
}

// String reads the line as a person would: "scheduler: 1 of 1 healthy".
func (h roleHealth) String() string {
	return h.Role + ": " + strconv.Itoa(h.Healthy) + " of " + strconv.Itoa(h.Total) + " " + h.Status
}
