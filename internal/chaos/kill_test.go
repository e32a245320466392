package chaos

import (
	"testing"
	"time"

	"github.com/weirflow/weir/internal/testutil/pgtest"
)

// TestSIGKILL kills each role -chaos.kills times at random moments while
// runs of the mixed DAG go on, restarting it each time; standalone runs on
// SQLite, the other roles each in a deployment of their own on
// PostgreSQL. Every -chaos.trial kills, the runs are let finish and checked.
func TestSIGKILL(t *testing.T) {
	t.Parallel()
	for _, victim := range append([]role{standalone}, roles...) {
		t.Run(victim.name, func(t *testing.T) {
			t.Parallel()
			o := deploymentOptions{}
			if victim.runsTasks {
				o.heartbeatTimeout = shortHeartbeatTimeout
			}
			if victim.name != standalone.name {
				o.postgres = pgtest.DSN(t)
			}
			d := deploy(t, "sigkill "+victim.name, o)
			defer d.finish()
			for d.fig.faults < *killsFlag {
				for i := 0; i < *trialFlag && d.fig.faults < *killsFlag; i++ {
					d.keepRunning(3)
					d.snapshot()
					d.pause(50*time.Millisecond, 1500*time.Millisecond)
					d.kill(victim.name)
				}
				d.check()
			}
		})
	}
}
