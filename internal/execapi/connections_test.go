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
	dag := twoTaskDAG("d")
	dag.Tasks[0].Connections = []string{"warehouse", "nope"}
	env.SeedRun(t, dag, "r1", "")
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

// A task reads only the connections it declares (conn_id, http_conn_id,
// connections:) unless the deployment allows any, as Airflow does (issue
// 13, finding 4: any running task could read every connection).
func TestConnectionAccessIsDeclared(t *testing.T) {
	t.Parallel()
	for _, allowAny := range []bool{false, true} {
		env := execapitest.New(t, execapi.Config{AllowAnyConnection: allowAny})
		ctx := context.Background()
		for id, uri := range map[string]string{"warehouse": "postgres://u:pw@db/dw", "payroll": "postgres://hr:pw@hr/pay"} {
			if err := env.Store.ConnectionUpsert(ctx, &core.Connection{ID: id, URI: uri}); err != nil {
				t.Fatal(err)
			}
		}
		dag := core.DAG{DagID: "d", Tasks: []core.Task{
			{TaskID: "load", Operator: "sql", Args: map[string]any{"conn_id": "warehouse", "sql": "select 1"}},
			{TaskID: "other", Operator: "noop"},
		}}
		env.SeedRun(t, dag, "r1", "")
		wl := claimAll(t, env, 2)["load"]
		c := taskClient(env, wl)
		if _, err := c.Run(ctx, wl.TI.ID, execclient.RunRequest{}); err != nil {
			t.Fatal(err)
		}
		if uri, err := c.ConnectionURI(ctx, "warehouse"); err != nil || uri != "postgres://u:pw@db/dw" {
			t.Fatalf("declared connection: %q, %v", uri, err)
		}
		uri, err := c.ConnectionURI(ctx, "payroll")
		if allowAny {
			if err != nil || uri != "postgres://hr:pw@hr/pay" {
				t.Fatalf("allow_any_connection: %q, %v", uri, err)
			}
			continue
		}
		status(t, err, 403, `task load of dag d does not declare connection "payroll"`)
		// An unknown id is refused the same way: no probing for which exist.
		_, err = c.ConnectionURI(ctx, "no-such")
		status(t, err, 403, `does not declare connection "no-such"`)
	}
}

type staticConns map[string]string

func (s staticConns) ConnectionURI(_ context.Context, id string) (string, error) {
	if u, ok := s[id]; ok {
		return u, nil
	}
	return "", core.ErrNotFound
}
