package cli_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// seedState adds what the state edits need to a surfaces database: run r1
// of etl (its task load has a task instance) and the asset orders, whose id
// it returns.
func seedState(t *testing.T, st store.Store) int64 {
	t.Helper()
	ctx, now := t.Context(), time.Now().UTC()
	v, err := st.DagVersionLatest(ctx, "etl")
	if err == nil {
		_, err = st.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: "etl", RunID: "r1", RunType: core.RunManual,
			State: core.RunRunning, DagVersionID: v.ID, Now: now, TaskInstances: []store.NewTaskInstance{{ID: uuid.NewString(),
				TaskID: "load", MapIndex: -1, MaxTries: 1, Operator: "noop", State: core.TISuccess}}})
	}
	prod := core.DAG{DagID: "prod", Assets: []core.Asset{{Name: "orders", URI: "s3://lake/orders"}},
		Tasks: []core.Task{{TaskID: "t", Operator: "noop", Outlets: []core.AssetRef{{Name: "orders"}}}}}
	if err == nil {
		_, _, err = st.DagSync(ctx, &store.DagSyncParams{Spec: prod, Hash: "prod", Now: now})
	}
	if err == nil {
		err = st.AssetSync(ctx, &store.AssetSyncParams{Spec: &prod, Now: now})
	}
	var a *core.AssetModel
	if err == nil {
		a, err = st.AssetGetByName(ctx, "orders")
	}
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// The same state edit from the admin CLI and over REST, for task state and
// for asset state, has the same result (the key is gone) and leaves the
// same audit record (action, target, detail); only who acted differs: the
// REST user, or cli:<os user> (docs/api.md#state-store).
func TestStateEditsAlikeFromCLIAndREST(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s *surfaces) {
		orders := seedState(t, s.st)
		for _, c := range []struct {
			scope core.StateScope
			path  string   // the REST collection
			flags []string // the CLI's scope flags
		}{
			{core.TaskScope("etl", "r1", "load", -1), "/api/v2/dags/etl/dagRuns/r1/taskInstances/load/state-store",
				[]string{"--dag", "etl", "--run", "r1", "--task", "load"}},
			{core.AssetScope(orders), fmt.Sprintf("/api/v2/assets/%d/state-store", orders), []string{"--asset", "orders"}},
		} {
			for _, op := range []struct {
				path string // the REST DELETE
				cli  string // the CLI command, before the scope flags
			}{
				{c.path + "/a", "delete a"},
				{c.path, "clear"},
			} {
				var records []core.AuditEntry
				for _, side := range []string{"REST", "CLI"} {
					s.rest(http.MethodPut, c.path+"/a", map[string]any{"value": 1})
					if side == "REST" {
						s.rest(http.MethodDelete, op.path, nil)
					} else {
						s.run(append(append([]string{"state-store"}, strings.Fields(op.cli)...), c.flags...)...)
					}
					if _, err := s.st.StateGet(t.Context(), c.scope, "a"); err == nil {
						t.Errorf("%s %s from the %s: key a is still there", c.scope.Kind, op.cli, side)
					}
					records = append(records, s.lastAudit())
				}
				rest, cli := records[0], records[1]
				if rest.User != "otto" || cli.User != "cli:tester" {
					t.Errorf("%s %s: users %q and %q, want otto and cli:tester", c.scope.Kind, op.cli, rest.User, cli.User)
				}
				if rest.Action != cli.Action || rest.Target != cli.Target || rest.Detail != cli.Detail ||
					!strings.HasPrefix(rest.Action, string(c.scope.Kind)+"_state.") {
					t.Errorf("%s %s: REST recorded %s %s %q, the CLI %s %s %q", c.scope.Kind, op.cli,
						rest.Action, rest.Target, rest.Detail, cli.Action, cli.Target, cli.Detail)
				}
			}
		}
	})
}
