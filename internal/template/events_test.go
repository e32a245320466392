package template

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// The events that created a run reach templates as
// .triggering_asset_events and a shell task's environment as
// WEIR_TRIGGERING_ASSET_EVENTS; a run without events has an empty list and
// no variable.
func TestTriggeringAssetEvents(t *testing.T) {
	t.Parallel()
	part := "batch-1"
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	events := []core.AssetEvent{
		{ID: 7, Name: "batches", URI: "s3://b", PartitionKey: &part, Extra: json.RawMessage(`{"rows":3}`), SourceKind: core.AssetSourceTask, Timestamp: at},
		{ID: 9, Name: "batches", URI: "s3://b", Extra: json.RawMessage(`{}`), SourceKind: core.AssetSourceAPI, SourceUser: "alice", Timestamp: at},
	}
	run := &core.DagRun{DagID: "d", RunID: "r", RunType: core.RunAssetTriggered, QueuedAt: at}
	ctx := Context(run, nil, nil)
	AddEvents(ctx, events)
	got, err := Render(`{{ range .triggering_asset_events }}{{ .id }}:{{ .asset }}:{{ .partition_key }}:{{ json .extra }}:{{ .source_kind }}{{ .source_user }};{{ end }}`, ctx, Funcs{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `7:batches:batch-1:{"rows":3}:task;9:batches::{}:apialice;`; got != want {
		t.Errorf("rendered %q, want %q", got, want)
	}
	env := strings.Join(Env(ctx), "\n")
	if !strings.Contains(env, EnvTriggeringAssetEvents+`=[{"id":7,"asset_id":0,"name":"batches"`) {
		t.Errorf("env lacks the events as JSON:\n%s", env)
	}

	plain := Context(&core.DagRun{DagID: "d", RunID: "m", RunType: core.RunManual, QueuedAt: at}, nil, nil)
	AddEvents(plain, nil)
	if got, err := Render(`{{ len .triggering_asset_events }}`, plain, Funcs{}); err != nil || got != "0" {
		t.Errorf("a run without events renders %q (%v), want 0", got, err)
	}
	if strings.Contains(strings.Join(Env(plain), "\n"), EnvTriggeringAssetEvents) {
		t.Errorf("a run without events has %s", EnvTriggeringAssetEvents)
	}
}
