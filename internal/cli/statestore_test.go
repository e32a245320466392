package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlite"
)

// stateSurfaces is one database reached both ways an operator edits state:
// the admin CLI (run in-process on the home's database) and the REST API
// (served on loopback over the same database, with an op's token).
type stateSurfaces struct {
	t     *testing.T
	home  string
	st    store.Store
	srv   *httptest.Server
	token string
}

func newStateSurfaces(t *testing.T) *stateSurfaces {
	t.Helper()
	ctx := context.Background()
	s := &stateSurfaces{t: t, home: t.TempDir()}
	s.weir("db", "migrate")
	cfg, err := config.Load(s.home, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, path, err := cfg.Database.Parse()
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s.st = st
	now := time.Now().UTC()
	dag := core.DAG{DagID: "etl", Assets: []core.Asset{{Name: "orders", URI: "s3://lake/orders"}},
		Tasks: []core.Task{{TaskID: "load", Operator: "noop", Outlets: []core.AssetRef{{Name: "orders"}}}}}
	vid, _, err := st.DagSync(ctx, &store.DagSyncParams{Spec: dag, Hash: "h", Now: now})
	if err == nil {
		err = st.AssetSync(ctx, &store.AssetSyncParams{Spec: &dag, Now: now})
	}
	if err == nil {
		_, err = st.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: "etl", RunID: "r1", RunType: core.RunManual,
			State: core.RunRunning, DagVersionID: vid, Now: now, TaskInstances: []store.NewTaskInstance{{ID: uuid.NewString(),
				TaskID: "load", MapIndex: -1, MaxTries: 1, Operator: "noop", State: core.TISuccess}}})
	}
	if err == nil {
		err = st.UserUpsert(ctx, &core.User{Username: "ops", Role: string(core.RoleOp), PasswordHash: "x", CreatedAt: now})
	}
	secret, hash := api.NewToken()
	if err == nil {
		err = st.APITokenCreate(ctx, &core.APIToken{ID: "t", Name: "t", Username: "ops", Hash: hash, CreatedAt: now})
	}
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.NewHandler(api.Config{Store: st, SecretKey: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	s.srv, s.token = httptest.NewServer(h), secret
	t.Cleanup(s.srv.Close)
	return s
}

// weir runs the CLI as OS user ops and fails the test on a non-zero exit.
func (s *stateSurfaces) weir(args ...string) string {
	s.t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Run(context.Background(), append(args, "--home", s.home),
		cli.Options{Stdout: &out, Stderr: &errOut, Environ: []string{"USER=ops"}})
	if code != 0 {
		s.t.Fatalf("weir %v: exit %d: %s", args, code, errOut.String())
	}
	return out.String()
}

// rest sends an op's request and fails the test unless the status is want.
func (s *stateSurfaces) rest(method, path, body string, want int) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.srv.URL+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != want {
		s.t.Fatalf("%s %s: status %d, want %d", method, path, resp.StatusCode, want)
	}
}

// keys lists the scope's keys over REST.
func (s *stateSurfaces) keys(path string) []string {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var list api.StateCollection
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		s.t.Fatal(err)
	}
	out := []string{}
	for _, e := range list.Entries {
		out = append(out, e.Key)
	}
	return out
}

// audit returns the audit log, oldest first, as {user, "action target detail"}.
func (s *stateSurfaces) audit() [][2]string {
	s.t.Helper()
	entries, err := s.st.AuditLogList(context.Background(), 0)
	if err != nil {
		s.t.Fatal(err)
	}
	var out [][2]string
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		out = append(out, [2]string{e.User, e.Action + " " + e.Target + " " + e.Detail})
	}
	return out
}

// The same state edit from the admin CLI and over REST, for task state and
// for asset state, has the same result and leaves the same audit record
// (action, target, detail); only who acted differs: the REST user, or
// cli:<os user> (docs/task-state.md, docs/asset-state.md).
func TestStateEditsAlikeFromCLIAndREST(t *testing.T) {
	t.Parallel()
	s := newStateSurfaces(t)
	orders, err := s.st.AssetGetByName(context.Background(), "orders")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind  string
		path  string   // the REST collection
		flags []string // the CLI's scope flags
	}{
		{"task", "/api/v2/dags/etl/dagRuns/r1/taskInstances/load/state-store", []string{"--dag", "etl", "--run", "r1", "--task", "load"}},
		{"asset", fmt.Sprintf("/api/v2/assets/%d/state-store", orders.ID), []string{"--asset", "orders"}},
	} {
		before := len(s.audit())
		for _, op := range []struct {
			rest, path string // the REST request
			cli        string // the CLI command, before the scope flags
		}{
			{http.MethodDelete, c.path + "/a", "delete a"},
			{http.MethodDelete, c.path, "clear"},
		} {
			for _, side := range []string{"rest", "cli"} {
				s.rest(http.MethodPut, c.path+"/a", `{"value": 1}`, http.StatusOK)
				if side == "rest" {
					s.rest(op.rest, op.path, "", http.StatusNoContent)
				} else {
					s.weir(append(append([]string{"state-store"}, strings.Fields(op.cli)...), c.flags...)...)
				}
				if got := s.keys(c.path); len(got) != 0 {
					t.Errorf("%s %s from %s: keys %v remain", c.kind, op.cli, side, got)
				}
			}
		}
		var edits [][2]string // the deletes and clears, without the sets
		for _, e := range s.audit()[before:] {
			if !strings.Contains(e[1], ".set ") {
				edits = append(edits, e)
			}
		}
		if len(edits) != 4 {
			t.Fatalf("%s: audit entries of the edits = %v, want 4", c.kind, edits)
		}
		for i := 0; i < 4; i += 2 {
			rest, cli := edits[i], edits[i+1]
			if rest[0] != "ops" || cli[0] != "cli:ops" {
				t.Errorf("%s: users %q and %q, want ops and cli:ops", c.kind, rest[0], cli[0])
			}
			if diff := cmp.Diff(rest[1], cli[1]); diff != "" {
				t.Errorf("%s: REST and CLI audit records differ (-rest +cli):\n%s", c.kind, diff)
			}
		}
		if want := c.kind + "_state.delete"; !strings.HasPrefix(edits[0][1], want) {
			t.Errorf("%s: audit record %q, want action %s", c.kind, edits[0][1], want)
		}
	}
}
