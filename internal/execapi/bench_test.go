package execapi_test

import (
	"context"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
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
