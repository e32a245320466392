package execapi_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/store"
)

// A run created from a burst of events carries at most
// execapi.MaxTriggeringEvents of them (the oldest) to each try, with the
// total: a 10,000-event run does not ship 10,000 events per try start.
func TestRunContextCutsTriggeringEvents(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := t.Context()
	orders := core.Asset{Name: "orders", URI: "s3://lake/orders"}
	cons := core.DAG{DagID: "cons", Assets: []core.Asset{orders}, AssetSchedule: []core.AssetRef{{Name: "orders"}},
		Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}}
	vid, _, err := env.Store.DagSync(ctx, &store.DagSyncParams{Spec: cons, Hash: "c", Now: env.Clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Store.AssetSync(ctx, &store.AssetSyncParams{Spec: &cons, Now: env.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	const burst = execapi.MaxTriggeringEvents + 2
	var first int64
	for i := range burst {
		ev, err := env.Store.AssetEventInsert(ctx, &store.AssetEventParams{AssetName: "orders", SourceKind: core.AssetSourceAPI, Now: env.Clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = ev.ID
		}
	}
	err = env.Store.WithTx(ctx, func(tx store.Store) error {
		run, err := tx.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: "cons", RunID: "burst", RunType: core.RunAssetTriggered,
			State: core.RunRunning, DagVersionID: vid, Now: env.Clock.Now(), TaskInstances: []store.NewTaskInstance{{
				ID: uuid.NewString(), TaskID: "t", MapIndex: core.NoMapIndex, MaxTries: 1, Operator: "noop", State: core.TIQueued, PriorityWeight: 1}}})
		if err != nil {
			return err
		}
		_, err = tx.AssetQueueConsume(ctx, "cons", run.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	wl := claimAll(t, env, 1)["t"]
	rc, err := taskClient(env, wl).Run(ctx, wl.TI.ID, execclient.RunRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(rc.TriggeringAssetEvents); got != execapi.MaxTriggeringEvents || rc.TriggeringAssetEventsTotal != burst {
		t.Fatalf("run context carries %d events of %d, want the first %d of %d", got, rc.TriggeringAssetEventsTotal, execapi.MaxTriggeringEvents, burst)
	}
	if rc.TriggeringAssetEvents[0].ID != first {
		t.Errorf("first event carried is %d, want the oldest, %d", rc.TriggeringAssetEvents[0].ID, first)
	}

	// The rest come a page at a time (`weir assets triggering-events`).
	tc := taskClient(env, wl)
	var ids []int64
	for after := int64(0); ; {
		p, err := tc.TriggeringEvents(ctx, after, 0)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != burst || len(p.Events) > execapi.MaxTriggeringEvents {
			t.Fatalf("page after %d: %d events of %d", after, len(p.Events), p.Total)
		}
		if len(p.Events) == 0 {
			break
		}
		for _, e := range p.Events {
			ids = append(ids, e.ID)
		}
		after = ids[len(ids)-1]
	}
	if len(ids) != burst || ids[0] != first || ids[burst-1] != first+burst-1 {
		t.Errorf("paged %d events from %d to %d, want all %d from %d, in order", len(ids), ids[0], ids[len(ids)-1], burst, first)
	}
	if _, err := tc.TriggeringEvents(ctx, 0, execapi.MaxTriggeringEvents+1); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("a page over the most: %v, want invalid", err)
	}
}
