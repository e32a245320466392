package execapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// A worker older than NoRetryVersion bounds a poke sensor's wait by its
// execution timeout only: it gets the sensor's timeout as that; a newer
// one reads it from the args (and keeps the task's own execution timeout).
func TestPokeSensorTimeoutForAnOlderWorker(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		version string
		want    time.Duration
	}{{"2026-12-05", 10 * time.Minute}, {execclient.NoRetryVersion, 0}} {
		r := httptest.NewRequest(http.MethodPost, "/execution/task-instances/claim", nil)
		r.Header.Set(execclient.APIVersionHeader, c.version)
		wls := []execclient.Workload{
			{Task: core.Task{TaskID: "poke", Operator: "sensor", Args: map[string]any{"mode": "poke", "timeout": "10m0s"}}},
			{Task: core.Task{TaskID: "own", Operator: "sensor", ExecutionTimeout: core.Duration(time.Hour), Args: map[string]any{"timeout": "10m0s"}}},
		}
		forOlderClient(r, wls)
		if got := wls[0].Task.ExecutionTimeout.D(); got != c.want {
			t.Errorf("client %s: the poke sensor's execution timeout = %s, want %s", c.version, got, c.want)
		}
		if got := wls[1].Task.ExecutionTimeout.D(); got != time.Hour {
			t.Errorf("client %s: a sensor's own execution timeout became %s", c.version, got)
		}
	}
}
