package execapi_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/store"
)

// BenchmarkClaimRunFinish measures one task try's Execution API round trips
// over loopback HTTP on SQLite: claim, run, state success (a Go no-op task).
func BenchmarkClaimRunFinish(b *testing.B) {
	env := execapitest.New(b, execapi.Config{})
	ctx := context.Background()
	env.SeedRun(b, manyTasks("bench", b.N), "r1", "")
	w := env.WorkerClient(b, "w1")
	b.ResetTimer()
	for range b.N {
		wls, err := w.Claim(ctx, execclient.ClaimRequest{Limit: 1})
		if err != nil || len(wls) != 1 {
			b.Fatalf("claim: %v %d", err, len(wls))
		}
		c := w.WithToken(wls[0].Token, execclient.TaskIdentity{TIID: wls[0].TI.ID})
		if _, err := c.Run(ctx, wls[0].TI.ID, execclient.RunRequest{}); err != nil {
			b.Fatal(err)
		}
		if _, err := c.SetState(ctx, wls[0].TI.ID, core.TISuccess); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStateGetSet measures a running try's state round trips over
// loopback HTTP on SQLite, for each kind: a set then a get of one of 20
// keys (the token check, the authorization, the write or read and the
// answer's JSON each time).
func BenchmarkStateGetSet(b *testing.B) {
	for _, kind := range []core.StateKind{core.StateTask, core.StateAsset} {
		b.Run(string(kind), func(b *testing.B) {
			env := execapitest.New(b, execapi.Config{})
			ctx := context.Background()
			orders := core.Asset{Name: "orders", URI: "s3://lake/orders"}
			dag := core.DAG{DagID: "bench", Assets: []core.Asset{orders},
				Tasks: []core.Task{{TaskID: "t", Operator: "noop", Outlets: []core.AssetRef{{Name: "orders"}}}}}
			env.SeedRun(b, dag, "r1", "")
			if err := env.Store.AssetSync(ctx, &store.AssetSyncParams{Spec: &dag, Now: env.Clock.Now()}); err != nil {
				b.Fatal(err)
			}
			w := env.WorkerClient(b, "w1")
			wls, err := w.Claim(ctx, execclient.ClaimRequest{Limit: 1})
			if err != nil || len(wls) != 1 {
				b.Fatalf("claim: %v %d", err, len(wls))
			}
			c := w.WithToken(wls[0].Token, execclient.TaskIdentity{TIID: wls[0].TI.ID})
			if _, err := c.Run(ctx, wls[0].TI.ID, execclient.RunRequest{}); err != nil {
				b.Fatal(err)
			}
			scope := core.StateScope{Kind: core.StateTask}
			if kind == core.StateAsset {
				scope = core.AssetScopeByName("orders")
			}
			value := json.RawMessage(`{"page": 7, "cursor": "c-42"}`)
			b.ResetTimer()
			for i := range b.N {
				key := "k" + strconv.Itoa(i%20)
				if err := c.StateSet(ctx, scope, key, value, ""); err != nil {
					b.Fatal(err)
				}
				if _, err := c.StateGet(ctx, scope, key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
