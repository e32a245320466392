package worker

import (
	"bytes"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/template"
)

// The try's log says when the run consumed more asset events than the
// task's list holds, or the list is left out of its environment; a run
// whose list is whole (or has none) says nothing.
func TestTheLogSaysWhenEventsAreCut(t *testing.T) {
	t.Parallel()
	w := &Worker{Clock: core.SystemClock{}}
	events := func(n int) []core.AssetEvent { return make([]core.AssetEvent, n) }
	inEnv := []string{template.EnvAssetEvents + "=[...]"}
	for _, tc := range []struct {
		name  string
		rc    execclient.RunContext
		env   []string
		wants string
	}{
		{"no events", execclient.RunContext{}, inEnv, ""},
		{"all held", execclient.RunContext{TriggeringAssetEvents: events(3), TriggeringAssetEventsTotal: 3}, inEnv, ""},
		{"a burst over the list", execclient.RunContext{TriggeringAssetEvents: events(1000), TriggeringAssetEventsTotal: 1500}, inEnv,
			"consumed 1500 asset events; WEIR_TRIGGERING_ASSET_EVENTS holds the first 1000: `weir assets triggering-events` prints them all"},
		{"left out", execclient.RunContext{TriggeringAssetEvents: events(800), TriggeringAssetEventsTotal: 800}, nil,
			"holds none of them (left out over 128 KiB)"},
	} {
		var log bytes.Buffer
		w.sayEventsCut(&log, &tc.rc, tc.env)
		if got := log.String(); (tc.wants == "") != (got == "") || !strings.Contains(got, tc.wants) {
			t.Errorf("%s: log %q, want %q", tc.name, got, tc.wants)
		}
	}
}
