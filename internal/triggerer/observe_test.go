package triggerer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/testutil/wait"
	"github.com/weirflow/weir/internal/trigger/builtin"
	"github.com/weirflow/weir/internal/triggerer"
)

// tally is an Observer that counts by trigger type.
type tally struct {
	mu            sync.Mutex
	fired, failed map[string]int
}

func (c *tally) TriggerFired(typ string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fired[typ] += n
}

func (c *tally) TriggerFailed(typ string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed[typ]++
}

func (c *tally) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("fired %v, failed %v", c.fired, c.failed)
}

// The observer (the metrics' weir_trigger_events_total and
// weir_trigger_failures_total) hears each committed event and each failed
// run under its trigger's type, on both engines.
func TestObserverCountsFiringsAndFailuresByType(t *testing.T) {
	for name, open := range engines() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			reg := builtin.Registry()
			must(t, reg.Register(failing[0])) // boom
			svc := service.New(service.Config{Store: st, Triggers: reg})
			deferred(t, st, svc, 2, core.TriggerSpec{Type: "timedelta", Kwargs: json.RawMessage(`{"delta":"0s"}`)}, time.Hour)
			deferred(t, st, svc, 1, core.TriggerSpec{Type: "boom"}, 0)
			obs := &tally{fired: map[string]int{}, failed: map[string]int{}}
			ctx, cancel := context.WithCancel(t.Context())
			tr := &triggerer.Triggerer{Service: svc, Store: st, Registry: reg, Observer: obs,
				Config: triggerer.Config{HeartbeatInterval: time.Second}}
			done := make(chan struct{})
			go func() { defer close(done); _ = tr.Start(ctx) }()
			t.Cleanup(func() { cancel(); <-done })
			want := "fired map[timedelta:2], failed map[boom:1]"
			wait.Until(t, 60*time.Second, "the observer to hear "+want, func() bool { return obs.String() == want })
		})
	}
}
