package ui

import (
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
)

// An iterating task's expansion reads as service.Expansion reports it:
// waiting until the producer opens its stream, expanding while it is
// open, complete once it closed, stopped when it failed; a stream's head
// reads open, closed or failed with its reason.
func TestBuildStreamPanel(t *testing.T) {
	t.Parallel()
	item := &core.TaskInstance{TaskID: "insert", MapIndex: 3}
	open := &core.Stream{ID: "s", NextIndex: 5, Pending: 2, MaxPending: 10}
	exp := func(items int64, open bool, errMsg string) *service.Expansion {
		return &service.Expansion{TaskID: "insert", Iterate: "fetch", StreamID: "s", Items: items, Instances: int(items), Open: open, Error: errMsg}
	}
	tests := []struct {
		name       string
		in         streamInputs
		wantNil    bool
		wantStatus string
		wantOpen   bool
		wantSource string
	}{
		{name: "no stream, no iterate", in: streamInputs{TI: item}, wantNil: true},
		{name: "waiting for the producer", in: streamInputs{TI: item, Expansion: exp(0, true, "")},
			wantStatus: "waiting for fetch to open its stream", wantOpen: true},
		{name: "expanding", in: streamInputs{TI: item, Expansion: exp(5, true, ""), Source: open},
			wantStatus: "expanding: an instance per item as items arrive", wantOpen: true, wantSource: "open"},
		{name: "complete", in: streamInputs{TI: item, Expansion: exp(5, false, ""), Source: &core.Stream{ID: "s", NextIndex: 5, Closed: true}},
			wantStatus: "complete: the stream closed after 5 items, each with its instance", wantSource: "closed"},
		{name: "producer failed", in: streamInputs{TI: item, Expansion: exp(2, false, "boom"), Source: &core.Stream{ID: "s", NextIndex: 2, Closed: true, Error: "boom"}},
			wantStatus: "stopped: fetch's stream failed (boom)", wantSource: "failed"},
		{name: "producer ended without a stream", in: streamInputs{TI: item, Expansion: exp(0, false, "")},
			wantStatus: "complete: fetch ended without opening its stream (no items)"},
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
	if p := buildStreamPanel(streamInputs{TI: item, Own: &core.Stream{ID: "s", NextIndex: 7, Closed: true}}); p == nil || p.Own.Status != "closed" ||
		p.Own.Icon != "■" || p.Own.Items != 7 || p.Expansion != nil {
		t.Errorf("a producer's closed stream viewed as %+v", p)
	}
}
