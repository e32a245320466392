package ui

import (
	"slices"
	"strconv"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// knownRoles are the roles the health summary always lists, in this
// order, even when no process of theirs has reported (a scheduler must
// run; the others show "none reported"). Other roles' rows (an
// api-server, ...) follow by name. The DAG processor runs inside the
// scheduler's process, so the scheduler's heartbeat is its health too.
var knownRoles = []string{"scheduler", "triggerer", "worker"}

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

// summarizeHealth groups the recorded processes by role: how many are
// healthy (a heartbeat within within of now, the REST API's health
// threshold) and the newest heartbeat. A role is healthy when one of its
// processes is; a required role (the scheduler) without any is
// unhealthy, as GET /api/v2/monitor/health says.
func summarizeHealth(jobs []core.Job, now time.Time, within time.Duration) []roleHealth {
	by := map[string]*roleHealth{}
	latest := map[string]time.Time{}
	var order []string
	for _, r := range knownRoles {
		by[r] = &roleHealth{Role: r}
		order = append(order, r)
	}
	var extra []string
	for _, j := range jobs {
		h, ok := by[j.Role]
		if !ok {
			h = &roleHealth{Role: j.Role}
			by[j.Role] = h
			extra = append(extra, j.Role)
		}
		h.Total++
		if now.Sub(j.Heartbeat) <= within {
			h.Healthy++
		}
		if j.Heartbeat.After(latest[j.Role]) {
			latest[j.Role] = j.Heartbeat
		}
	}
	slices.Sort(extra)
	out := make([]roleHealth, 0, len(order)+len(extra))
	for _, r := range append(order, extra...) {
		h := by[r]
		switch {
		case h.Healthy > 0:
			h.Status, h.Icon, h.Class = "healthy", "✓", "s-success"
		case h.Total > 0 || r == "scheduler":
			h.Status, h.Icon, h.Class = "unhealthy", "✗", "s-failed"
		default:
			h.Status, h.Icon, h.Class = "none reported", "·", "s-none"
		}
		if t, ok := latest[r]; ok {
			h.Latest = roundDur(max(now.Sub(t), 0)) + " ago"
		}
		out = append(out, *h)
	}
	return out
}

// String reads the line as a person would: "scheduler: 1 of 1 healthy".
func (h roleHealth) String() string {
	return h.Role + ": " + strconv.Itoa(h.Healthy) + " of " + strconv.Itoa(h.Total) + " " + h.Status
}
