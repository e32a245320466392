package job

import (
	"time"

	"github.com/weirflow/weir/internal/core"
)

// Gone says whether the process whose job row is id has stopped, judged as
// WorkerCutoffs judges workers: its row's latest heartbeat is more than
// MissedBeats of its interval (at least MinAliveWindow: one late write on a
// loaded machine is no death) before api.Until, the latest api-server
// heartbeat; or it has no row (deleted or pruned since) while since, when
// the process made what the caller holds it to, is that old by interval
// (the interval its role beats at). Nothing is judged gone while the
// api-servers' uptime began after the cutoff: the process's beats could
// not all have been heard.
func Gone(jobs []core.Job, id string, since time.Time, interval time.Duration, api Uptime) bool {
	last := since
	for _, j := range jobs {
		if j.ID == id {
			last = j.Heartbeat
			if j.Interval > 0 {
				interval = j.Interval
			}
			break
		}
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	cutoff := api.Until.Add(-max(MissedBeats*interval, MinAliveWindow))
	return last.Before(cutoff) && !api.Since.After(cutoff)
}

// MayBeGone says whether Gone can find any process gone under api: not
// while the api-servers' uptime is shorter than MinAliveWindow, the least
// window Gone judges over (a scheduler's first checks, a start-up).
func MayBeGone(api Uptime) bool {
	return !api.Since.After(api.Until.Add(-MinAliveWindow))
}
