package execapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
)

func TestConnectionLookupThroughTheAPI(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	if err := env.Store.ConnectionUpsert(ctx, &core.Connection{ID: "warehouse", URI: "postgres://u:pw@db:5432/dw"}); err != nil {
		t.Fatal(err)
	}
	env.SeedRun(t, twoTaskDAG("d"), "r1", "")
	wls := claimAll(t, env, 2)
	ca := taskClient(env, wls["a"])

	// A try that is not running yet may not read connections.
	_, err := ca.ConnectionURI(ctx, "warehouse")
	status(t, err, 403, "not running")

	if _, err := ca.Run(ctx, wls["a"].TI.ID, execclient.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	uri, err := ca.ConnectionURI(ctx, "warehouse")
	if err != nil || uri != "postgres://u:pw@db:5432/dw" {
		t.Fatalf("ConnectionURI = %q, %v", uri, err)
	}
	if _, err := ca.ConnectionURI(ctx, "nope"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("unknown connection: %v, want not found", err)
	}
	// The worker's own configuration comes first; the API fills the gaps.
	static := staticConns{"warehouse": "postgres://u:other@cfg/dw"}
	got, err := operator.Chain(static, ca).ConnectionURI(ctx, "warehouse")
	if err != nil || got != "postgres://u:other@cfg/dw" {
		t.Fatalf("chain prefers config: %q, %v", got, err)
	}
	if _, err := operator.Chain(static, ca).ConnectionURI(ctx, "nope"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("chain of misses: %v, want not found", err)
	}
}

type staticConns map[string]string

func (s staticConns) ConnectionURI(_ context.Context, id string) (string, error) {
	if u, ok := s[id]; ok {
		return u, nil
	}
	return "", core.ErrNotFound
}
