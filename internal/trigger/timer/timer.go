// Package timer holds the time triggers: datetime (fire at a moment) and
// timedelta (fire a duration after the trigger was created, so a trigger
// that moves to another triggerer keeps its deadline).
package timer

import (
	"context"
	"encoding/json"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/trigger"
)

// DateTime fires once at moment. kwargs: {"moment": "2026-12-01T10:00:00Z"}.
var DateTime = trigger.Type{
	Name:    "datetime",
	Summary: "fires once at a moment (RFC 3339 time with a zone)",
	New: func(kwargs json.RawMessage) (trigger.Trigger, error) {
		var k struct {
			Moment *string `json:"moment"`
		}
		if err := trigger.DecodeKwargs(kwargs, &k); err != nil {
			return nil, err
		}
		if k.Moment == nil {
			return nil, trigger.Invalid("moment", "is required (an RFC 3339 time such as 2026-12-01T10:00:00Z)")
		}
		m, err := time.Parse(time.RFC3339Nano, *k.Moment)
		if err != nil {
			return nil, trigger.Invalid("moment", "must be an RFC 3339 time such as 2026-12-01T10:00:00Z, got %q", *k.Moment)
		}
		return at{moment: func(*trigger.Runtime) time.Time { return m }}, nil
	},
}

// TimeDelta fires once delta after the trigger was created.
// kwargs: {"delta": "90s"} (a Go duration, at least 0).
var TimeDelta = trigger.Type{
	Name:    "timedelta",
	Summary: "fires once a duration after the task deferred",
	New: func(kwargs json.RawMessage) (trigger.Trigger, error) {
		var k struct {
			Delta *core.Duration `json:"delta"`
		}
		if err := trigger.DecodeKwargs(kwargs, &k); err != nil {
			return nil, err
		}
		switch {
		case k.Delta == nil:
			return nil, trigger.Invalid("delta", "is required (a duration such as \"90s\" or \"10m\")")
		case *k.Delta < 0:
			return nil, trigger.Invalid("delta", "must not be negative, got %s", k.Delta.D())
		}
		d := k.Delta.D()
		return at{moment: func(rt *trigger.Runtime) time.Time { return rt.CreatedAt.Add(d) }}, nil
	},
}

// at fires once at the moment it computes from its runtime.
type at struct {
	moment func(*trigger.Runtime) time.Time
}

func (a at) Run(ctx context.Context, rt *trigger.Runtime) error {
	m := a.moment(rt)
	if wait := m.Sub(rt.Now()); wait > 0 {
		if err := trigger.Sleep(ctx, wait); err != nil {
			return err
		}
	}
	return rt.Emit(ctx, map[string]any{"moment": m.UTC().Format(time.RFC3339Nano)})
}
