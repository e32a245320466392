package job

import (
	"time"

	"github.com/weirflow/weir/internal/core"
)

// WorkerRole is the role of a worker process's job row (written by the
// Execution API on each worker heartbeat).
const WorkerRole = "worker"

// MissedBeats is how many of its heartbeat intervals a worker may stay
// silent before its tries fail over.
const MissedBeats = 2

// Silent says whether a worker whose latest heartbeat was beat, every
// interval, has missed one at now (half an interval of slack): a process
// stopped (SIGSTOP), partitioned away or dead, to which no claim waiting
// for it should hand a try (it would start it only to have it failed over
// MissedBeats later, spending a retry). A worker without an interval is
// never silent.
func Silent(j *core.Job, now time.Time) bool {
	return j.Interval > 0 && now.Sub(j.Heartbeat) > j.Interval*3/2
}

// WorkerCutoffs gives, per worker name with job rows, the moment before
// which a try of that worker unrefreshed is dead: MissedBeats of the
// worker's heartbeat interval (its latest row's) before api.Until, the
// latest api-server heartbeat. A live worker refreshes every try it holds
// at each beat, so a try unrefreshed for that long is held by none of the
// worker's live processes. A worker is left out (nothing of it is judged)
// while the api-servers' uptime began after its cutoff: its beats could
// not all have been heard (docs/state-machines.md#dead-workers).
func WorkerCutoffs(jobs []core.Job, api Uptime) map[string]time.Time {
	latest := map[string]core.Job{}
	for _, j := range jobs {
		if j.Role != WorkerRole || j.WorkerID == "" || j.Interval <= 0 {
			continue
		}
		if cur, ok := latest[j.WorkerID]; !ok || j.Heartbeat.After(cur.Heartbeat) {
			latest[j.WorkerID] = j
		}
	}
	out := map[string]time.Time{}
	for name, j := range latest {
		cutoff := api.Until.Add(-MissedBeats * j.Interval)
		if api.Since.After(cutoff) {
			continue
		}
		out[name] = cutoff
	}
	return out
}
