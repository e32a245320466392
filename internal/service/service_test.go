package service_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

var (
	viewer = core.Actor{Name: "vera", Role: core.RoleViewer}
	op     = core.Actor{Name: "otto", Role: core.RoleOp}
	admin  = core.Actor{Name: "ada", Role: core.RoleAdmin}
)

// audits returns the audit log, oldest first, as "user action target detail".
func audits(t *testing.T, st store.Store) []string {
	t.Helper()
	es, err := st.AuditLogList(context.Background(), &store.AuditLogListParams{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[len(es)-1-i] = strings.TrimSpace(strings.Join([]string{e.User, e.Action, e.Target, e.Detail}, " "))
	}
	return out
}

// A change needs its role: a refusal names the actor, the action and the
// role needed, and changes nothing (not even the audit log).
func TestChangesAreAuthorized(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	svc := newSvc(st, clocktest.New(t0))
	syncDAG(t, st, chainDAG)

	refusals := map[string]error{}
	_, refusals["pause"] = svc.SetDagPaused(ctx, viewer, "chain", true)
	_, refusals["trigger"] = svc.TriggerRun(ctx, viewer, runs.TriggerParams{DagID: "chain"})
	_, refusals["clear"] = svc.Clear(ctx, viewer, service.ClearParams{DagID: "chain"})
	_, refusals["pool"] = svc.SavePool(ctx, op, service.PoolChange{Name: "p", Slots: ptr(2)})
	refusals["connection"] = svc.SaveConnection(ctx, op, core.Connection{ID: "c", URI: "http://x"}, true)
	refusals["user"] = svc.SaveUser(ctx, op, "eve", "pw", core.RoleAdmin)
	for what, err := range refusals {
		if !errors.Is(err, core.ErrForbidden) || !strings.Contains(err.Error(), "may not") {
			t.Errorf("%s by a too-low role: err = %v, want ErrForbidden saying who may not do what", what, err)
		}
	}
	if d, _ := st.DagGet(ctx, "chain"); d.IsPaused {
		t.Error("a refused pause paused the DAG")
	}
	if got := audits(t, st); len(got) != 0 {
		t.Errorf("audit log after refusals = %q, want empty", got)
	}
}

// Every change by a person is audited in its own transaction, with the same
// record whichever surface asked; Weir's own changes are not audited.
func TestChangesAreAuditedAndWakeTheScheduler(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	svc := newSvc(st, clocktest.New(t0))
	syncDAG(t, st, chainDAG)
	wake := st.Subscribe(ctx, store.ChannelScheduler)
	woke := func(what string) {
		t.Helper()
		select {
		case <-wake:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not wake the scheduler", what)
		}
	}

	if _, err := svc.SetDagPaused(ctx, op, "chain", true); err != nil {
		t.Fatal(err)
	}
	woke("pause")
	run, err := svc.TriggerRun(ctx, op, runs.TriggerParams{DagID: "chain", RunID: "r1", Conf: []byte(`{"a":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	woke("trigger")
	if _, err := svc.TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "chain", RunID: "r2"}); err != nil {
		t.Fatal(err)
	}
	finishRun(t, st, run, map[string]core.TIState{"a": core.TISuccess, "b": core.TIFailed}, core.RunFailed)
	if _, err := svc.Clear(ctx, op, service.ClearParams{DagID: "chain", RunID: "r1", OnlyFailed: true, DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Clear(ctx, op, service.ClearParams{DagID: "chain", RunID: "r1", OnlyFailed: true}); err != nil {
		t.Fatal(err)
	}
	woke("clear")
	// Nothing failed is left: a second clear changes nothing and is not audited.
	if tis, err := svc.Clear(ctx, op, service.ClearParams{DagID: "chain", RunID: "r1", OnlyFailed: true}); err != nil || len(tis) != 0 {
		t.Fatalf("second clear = %d instances (err %v), want none", len(tis), err)
	}
	if _, err := svc.SavePool(ctx, admin, service.PoolChange{Name: "p", Slots: ptr(2)}); err != nil {
		t.Fatal(err)
	}
	woke("a new pool")
	want := []string{
		"otto dag.pause chain",
		`otto dag_run.trigger chain/r1 {"a":1}`,
		"otto dag_run.clear chain/r1 only_failed=true keep_task_state=false chain/r1/b",
		"ada pool.create p slots=2",
	}
	if got := audits(t, st); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit log =\n%s\nwant (no entry for the system's trigger, the dry run or the empty clear)\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A failed change rolls its audit entry back with it.
func TestAFailedChangeLeavesNoAuditEntry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	svc := newSvc(st, clocktest.New(t0))
	if _, err := svc.SetDagPaused(ctx, op, "nope", true); !errors.Is(err, core.ErrNotFound) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("pause of an unknown DAG: err = %v, want ErrNotFound naming it", err)
	}
	if _, err := svc.SavePool(ctx, admin, service.PoolChange{Name: "p", Slots: ptr(-1)}); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("negative slots: err = %v, want ErrInvalid", err)
	}
	if _, err := svc.SavePool(ctx, admin, service.PoolChange{Name: "q", Slots: ptr(1), Mode: service.PoolUpdate}); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("update of a missing pool: err = %v, want ErrNotFound", err)
	}
	if err := svc.DeletePool(ctx, admin, core.DefaultPool); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("delete default_pool: err = %v, want ErrInvalid", err)
	}
	if err := svc.SaveConnection(ctx, admin, core.Connection{ID: "db", URI: "no scheme secret"}, true); !errors.Is(err, core.ErrInvalid) ||
		strings.Contains(err.Error(), "secret") {
		t.Errorf("bad URI: err = %v, want ErrInvalid that does not echo the URI", err)
	}
	if _, err := svc.CreateAPIToken(ctx, admin, "ghost", "t", 0); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("token for an unknown user: err = %v, want ErrNotFound", err)
	}
	if got := audits(t, st); len(got) != 0 {
		t.Errorf("audit log = %q, want empty", got)
	}
}

// An admin revokes an API token: it is gone, the revocation is audited,
// and revoking it again names the id; an op may not revoke.
func TestRevokeAPIToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	svc := newSvc(st, clocktest.New(t0))
	if err := svc.SaveUser(ctx, admin, "ci", "pw", core.RoleOp); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateAPIToken(ctx, admin, "ci", "deploy", 0); err != nil {
		t.Fatal(err)
	}
	toks, err := st.APITokenList(ctx)
	if err != nil || len(toks) != 1 {
		t.Fatalf("tokens = %+v (%v), want one", toks, err)
	}
	if err := svc.RevokeAPIToken(ctx, op, toks[0].ID); !errors.Is(err, core.ErrForbidden) {
		t.Errorf("op revokes: err = %v, want ErrForbidden", err)
	}
	if err := svc.RevokeAPIToken(ctx, admin, toks[0].ID); err != nil {
		t.Fatal(err)
	}
	if left, _ := st.APITokenList(ctx); len(left) != 0 {
		t.Errorf("tokens after revoke = %+v, want none", left)
	}
	if err := svc.RevokeAPIToken(ctx, admin, toks[0].ID); !errors.Is(err, core.ErrNotFound) || !strings.Contains(err.Error(), toks[0].ID) {
		t.Errorf("revoke twice: err = %v, want ErrNotFound naming the id", err)
	}
	if got := audits(t, st); !strings.Contains(strings.Join(got, "\n"), "api_token.revoke") {
		t.Errorf("audit log = %q, want the revocation", got)
	}
}

// FinishTry decides retries by runs.Outcome, records outlet events only on
// success, and refuses a try that is no longer running; FailDeadTry ends a
// dead worker's try by the same rule.
func TestFinishTryAndFailDeadTry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	clk := clocktest.New(t0)
	svc := newSvc(st, clk)
	dag := core.DAG{DagID: "out", Assets: []core.Asset{{Name: "orders", URI: "s3://b/orders"}}, Tasks: []core.Task{
		{TaskID: "a", Operator: "noop", Retries: 1, RetryDelay: core.Duration(time.Minute), Outlets: []core.AssetRef{{Name: "orders"}}},
	}}
	syncDAG(t, st, dag)
	run, err := svc.TriggerRun(ctx, core.System, runs.TriggerParams{DagID: "out"})
	if err != nil {
		t.Fatal(err)
	}
	a := startTry(t, st, run, "a")
	res, err := svc.FinishTry(ctx, a, core.TIFailed)
	if err != nil || res.State != core.TIUpForRetry || res.NextRetryAt == nil || !res.NextRetryAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("first failure = %+v (err %v), want up_for_retry in a minute", res, err)
	}
	if _, err := svc.FinishTry(ctx, a, core.TISuccess); !errors.Is(err, core.ErrConflict) {
		t.Errorf("finish of a try that already ended: err = %v, want ErrConflict", err)
	}
	events, err := st.AssetEventList(ctx, &store.AssetEventListParams{})
	if err != nil || len(events) != 0 {
		t.Errorf("events after a failure = %d (err %v), want none", len(events), err)
	}

	// The retry's worker dies: its last try fails for good.
	retryTry(t, st, a)
	a = startTry(t, st, run, "a")
	if res, err := svc.FailDeadTry(ctx, a); err != nil || res.State != core.TIFailed {
		t.Fatalf("dead worker's last try = %+v (err %v), want failed", res, err)
	}

	// Cleared and run again, it succeeds: one event of its outlet.
	if err := clearTasks(ctx, st, clk, run, false, "a"); err != nil {
		t.Fatal(err)
	}
	a = startTry(t, st, run, "a")
	if res, err := svc.FinishTry(ctx, a, core.TISuccess); err != nil || res.State != core.TISuccess {
		t.Fatalf("success = %+v (err %v)", res, err)
	}
	events, err = st.AssetEventList(ctx, &store.AssetEventListParams{})
	if err != nil || len(events) != 1 || events[0].Name != "orders" || events[0].SourceTaskID != "a" {
		t.Errorf("events after success = %+v (err %v), want one of orders from a", events, err)
	}
	if _, err := svc.FinishTry(ctx, a, core.TIRunning); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("finish as running: err = %v, want ErrInvalid", err)
	}
}

func ptr[T any](v T) *T { return &v }

// CreateUser leaves an existing user as it is (a provisioning script run
// again resets no password, promotes no one); a new password, from
// SaveUser or UpdateUser, revokes the API tokens the old one issued (POST
// /api/v2/auth/token) and keeps those an admin issued.
func TestUsersCreatedOnceAndPasswordsRevokeLoginTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	svc := newSvc(st, clocktest.New(t0))
	if err := svc.CreateUser(ctx, admin, "vic", "first-pw", core.RoleViewer); err != nil {
		t.Fatal(err)
	}
	err := svc.CreateUser(ctx, admin, "vic", "other-pw", core.RoleAdmin)
	if !errors.Is(err, core.ErrConflict) || !strings.Contains(err.Error(), `user "vic" exists (role viewer): change it with `+"`weir users update`") {
		t.Errorf("create of an existing user: %v, want a conflict naming weir users update", err)
	}
	if u, _ := st.UserGet(ctx, "vic"); u.Role != string(core.RoleViewer) {
		t.Errorf("vic is %s after the refused create, want viewer", u.Role)
	}
	loginToken := func(password string) {
		t.Helper()
		if _, err := svc.IssueLoginToken(ctx, auth.NewLoginThrottle(auth.ThrottleConfig{}, clocktest.New(t0)), "vic", password, "127.0.0.1", time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	tokens := func() []string {
		t.Helper()
		list, err := st.APITokenList(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tk := range list {
			names = append(names, tk.Name)
		}
		return names
	}
	loginToken("first-pw")
	if _, err := svc.CreateAPIToken(ctx, admin, "vic", "deploy", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateAPIToken(ctx, admin, "vic", core.LoginTokenName, 0); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("an admin's token named as the login's: %v, want it refused", err)
	}
	pw := "second-pw"
	if _, err := svc.UpdateUser(ctx, admin, "vic", service.UserChange{Password: &pw}); err != nil {
		t.Fatal(err)
	}
	if got := tokens(); !slices.Equal(got, []string{"deploy"}) {
		t.Errorf("tokens after a new password = %v, want the admin's deploy token only", got)
	}
	loginToken("second-pw")
	if err := svc.SaveUser(ctx, admin, "vic", "third-pw", core.RoleViewer); err != nil {
		t.Fatal(err)
	}
	if got := tokens(); !slices.Equal(got, []string{"deploy"}) {
		t.Errorf("tokens after SaveUser's new password = %v, want the deploy token only", got)
	}
}

// The last admin keeps the role: demoting or deleting it, by any of the
// three ways (UpdateUser, SaveUser's upsert, DeleteUser), is refused and
// changes nothing, so nobody is locked out of user management; with a
// second admin each works.
func TestTheLastAdminStays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	svc := newSvc(st, clocktest.New(t0))
	if err := svc.CreateUser(ctx, admin, "root", "pw-root", core.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	other := core.Actor{Name: "other", Role: core.RoleAdmin}
	viewer := core.RoleViewer
	refusals := map[string]error{
		"update": func() error {
			_, err := svc.UpdateUser(ctx, admin, "root", service.UserChange{Role: &viewer})
			return err
		}(),
		"save":   svc.SaveUser(ctx, admin, "root", "pw-root", core.RoleViewer),
		"delete": svc.DeleteUser(ctx, other, "root"),
	}
	for how, err := range refusals {
		if !errors.Is(err, core.ErrConflict) || !strings.Contains(err.Error(), `user "root" is the last admin: make another user admin first`) {
			t.Errorf("%s of the last admin: %v, want a conflict naming the rule", how, err)
		}
	}
	if u, err := st.UserGet(ctx, "root"); err != nil || u.Role != string(core.RoleAdmin) {
		t.Fatalf("root after the refusals: %+v, %v; want an admin", u, err)
	}
	if err := svc.CreateUser(ctx, admin, "ada", "pw-ada", core.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.UpdateUser(ctx, admin, "root", service.UserChange{Role: &viewer}); err != nil {
		t.Errorf("demoting one of two admins: %v", err)
	}
	if err := svc.DeleteUser(ctx, other, "ada"); !errors.Is(err, core.ErrConflict) {
		t.Errorf("deleting the admin left: %v, want a conflict", err)
	}
}
