package ui

import (
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// An iterating task's expansion reads as the scheduler decides it: open
// while the placeholder waits, complete once it is gone, empty when it was
// skipped, stopped when the producer failed; a stream's head reads open,
// closed or failed with its reason.
func TestBuildStreamPanel(t *testing.T) {
	t.Parallel()
	item := &core.TaskInstance{TaskID: "insert", MapIndex: 3}
	waiting := func(s core.TIState) *core.TaskInstance {
		return &core.TaskInstance{TaskID: "insert", MapIndex: -1, State: s}
	}
	open := &core.Stream{ID: "s", NextIndex: 5, Pending: 2, MaxPending: 10}
	tests := []struct {
		name       string
		in         streamInputs
		wantNil    bool
		wantStatus string
		wantOpen   bool
		wantSource string
	}{
		{name: "no stream, no iterate", in: streamInputs{TI: item}, wantNil: true},
		{name: "waiting for the producer", in: streamInputs{TI: item, Producer: "fetch", Placeholder: waiting(core.TINone)},
			wantStatus: "waiting for fetch to open its stream", wantOpen: true},
		{name: "expanding", in: streamInputs{TI: item, Producer: "fetch", Placeholder: waiting(core.TINone), Instances: 4, Source: open},
			wantStatus: "expanding: an instance per item as items arrive", wantOpen: true, wantSource: "open"},
		{name: "complete", in: streamInputs{TI: item, Producer: "fetch", Instances: 5},
			wantStatus: "complete: the stream closed and each of its 5 items has its instance"},
		{name: "empty", in: streamInputs{TI: item, Producer: "fetch", Placeholder: waiting(core.TISkipped)},
			wantStatus: "closed empty: the stream had no item"},
		{name: "producer failed", in: streamInputs{TI: item, Producer: "fetch", Placeholder: waiting(core.TIUpstreamFailed), Instances: 2,
			Source: &core.Stream{ID: "s", NextIndex: 2, Closed: true, Error: "boom"}},
			wantStatus: "stopped: the producer failed", wantSource: "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := buildStreamPanel(tt.in)
			if tt.wantNil {
				if p != nil {
					t.Fatalf("panel %+v, want none", p)
				}
				return
			}
			x := p.Expansion
			if x == nil || x.Status != tt.wantStatus || x.Open != tt.wantOpen || x.Item != 3 {
				t.Fatalf("expansion %+v, want status %q open %v item 3", x, tt.wantStatus, tt.wantOpen)
			}
			got := ""
			if x.Source != nil {
				got = x.Source.Status
			}
			if got != tt.wantSource {
				t.Errorf("source stream status %q, want %q", got, tt.wantSource)
			}
		})
	}
	if v := viewStream(&core.Stream{ID: "s", NextIndex: 7, Closed: true}); v.Status != "closed" || v.Icon != "■" || v.Items != 7 {
		t.Errorf("closed stream viewed as %+v", v)
	}
}
