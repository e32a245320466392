package execapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execapi/execapitest"
	"github.com/weirflow/weir/internal/execclient"
)

func TestXComPermissions(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	env.SeedRun(t, twoTaskDAG("d"), "r1", "")
	wls := claimAll(t, env, 2)
	env.SeedRun(t, twoTaskDAG("d"), "r2", "")
	other := claimAll(t, env, 2)["a"]
	ca, cb, cOther := taskClient(env, wls["a"]), taskClient(env, wls["b"]), taskClient(env, other)
	for _, wl := range []execclient.Workload{wls["a"], wls["b"], other} {
		if _, err := taskClient(env, wl).Run(ctx, wl.TI.ID, execclient.RunRequest{}); err != nil {
			t.Fatal(err)
		}
	}

	if err := ca.XComPush(ctx, core.DefaultXComKey, map[string]any{"rows": 3}); err != nil {
		t.Fatal(err)
	}
	// A try writes only its own XCom.
	err := ca.XComSet(ctx, execclient.XComKey{DagID: "d", RunID: "r1", TaskID: "b", MapIndex: -1, Key: "k"}, []byte(`1`))
	status(t, err, 403, "only its own")
	status(t, ca.XComSet(ctx, execclient.XComKey{DagID: "d", RunID: "r1", TaskID: "a", MapIndex: -1, Key: "k"}, []byte(`{bad`)), 400, "valid JSON")

	// Any task in the same run may read it; a task of another run may not.
	v, err := cb.XComPull(ctx, "a", "", -1)
	if err != nil || string(v) != `{"rows":3}` {
		t.Fatalf("pull = %s, %v", v, err)
	}
	_, err = cOther.XComGet(ctx, execclient.XComKey{DagID: "d", RunID: "r1", TaskID: "a", MapIndex: -1, Key: core.DefaultXComKey})
	status(t, err, 403, "own dag run")
	_, err = cb.XComPull(ctx, "a", "missing", -1)
	if !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("missing key: %v", err)
	}

	// Delete: own only.
	status(t, cb.XComDelete(ctx, execclient.XComKey{DagID: "d", RunID: "r1", TaskID: "a", MapIndex: -1, Key: core.DefaultXComKey}), 403, "only its own")
	if err := ca.XComDelete(ctx, execclient.XComKey{DagID: "d", RunID: "r1", TaskID: "a", MapIndex: -1, Key: core.DefaultXComKey}); err != nil {
		t.Fatal(err)
	}
	if _, err := cb.XComPull(ctx, "a", "", -1); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

// Pulled without a map index, as Airflow's xcom_pull without map_indexes,
// a mapped task's XCom is the list of what its instances pushed, in map
// index order; a map index names one instance's; an unmapped task's is its
// value.
func TestXComPullOfAMappedTaskIsItsList(t *testing.T) {
	t.Parallel()
	env := execapitest.New(t, execapi.Config{})
	ctx := context.Background()
	dag := core.DAG{DagID: "d", Tasks: []core.Task{
		{TaskID: "m", Operator: "noop", Expand: map[string]core.ExpandSource{"x": {Values: []any{1, 2, 3}}}},
		{TaskID: "u", Operator: "noop"},
		{TaskID: "none", Operator: "noop", Expand: map[string]core.ExpandSource{"x": {Values: []any{1}}}},
	}}
	env.SeedRun(t, dag, "r1", "")
	wls := claimAll(t, env, 3)
	c := taskClient(env, wls["u"])
	if _, err := c.Run(ctx, wls["u"].TI.ID, execclient.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	for i, v := range map[int]string{2: `30`, 0: `10`} { // instance 1 pushed nothing
		if err := env.Store.XComSet(ctx, &core.XCom{DagID: "d", RunID: "r1", TaskID: "m", MapIndex: i, Key: core.DefaultXComKey, Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Store.XComSet(ctx, &core.XCom{DagID: "d", RunID: "r1", TaskID: "m", MapIndex: 0, Key: "other", Value: []byte(`"x"`)}); err != nil {
		t.Fatal(err)
	}
	if err := c.XComPush(ctx, core.DefaultXComKey, "mine"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		task  string
		index int
		want  string
	}{
		{"m", execclient.AnyMapIndex, `[10,30]`},
		{"m", 2, `30`},
		{"none", execclient.AnyMapIndex, `[]`},
		{"u", execclient.AnyMapIndex, `"mine"`},
		{"u", core.NoMapIndex, `"mine"`},
	} {
		got, err := c.XComPull(ctx, tc.task, "", tc.index)
		if err != nil || string(got) != tc.want {
			t.Errorf("pull %s (map index %d) = %s, %v; want %s", tc.task, tc.index, got, err, tc.want)
		}
	}
	if _, err := c.XComPull(ctx, "m", "", 1); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("pull of an instance that pushed nothing: %v, want not found", err)
	}
}
