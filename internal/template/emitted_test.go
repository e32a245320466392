package template

import (
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// An emitted event's partition date and an external event's posting user
// reach templates (docs/emission.md#consumers), empty for events without
// them.
func TestEventPartitionDateAndUser(t *testing.T) {
	t.Parallel()
	part, at := "batch-1", time.Date(2026, 3, 1, 0, 0, 0, 0, time.FixedZone("CET", 3600))
	ctx := WithEvents(Context(&core.DagRun{DagID: "d", RunID: "r", QueuedAt: at}, nil, nil), []core.AssetEvent{
		{ID: 1, Name: "batches", PartitionKey: &part, PartitionDate: &at, SourceKind: core.AssetSourceTask, Timestamp: at},
		{ID: 2, Name: "batches", SourceKind: core.AssetSourceAPI, SourceUser: "alice", Timestamp: at},
	}, 5)
	got, err := Render(`{{ range .triggering_asset_events }}{{ .id }}:{{ .partition_key }}:{{ .partition_date }}:{{ .source_user }};{{ end }}`, ctx, Funcs{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "1:batch-1:2026-02-28T23:00:00+00:00:;2:::alice;"; got != want {
		t.Errorf("rendered %q, want %q", got, want)
	}
	// The list may be cut (execapi.MaxTriggeringEvents): the total says so.
	if got, err := Render(`{{ len .triggering_asset_events }} of {{ .triggering_asset_events_total }}`, ctx, Funcs{}); err != nil || got != "2 of 5" {
		t.Errorf("rendered %q, %v; want \"2 of 5\"", got, err)
	}
}
