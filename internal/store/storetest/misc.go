package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

func testUsersTokens(t *testing.T, f *fixture) {
	must(t, f.st.UserUpsert(f.ctx, &core.User{Username: "ada", PasswordHash: "h1", Role: "admin", CreatedAt: f.now}), "create user")
	must(t, f.st.UserUpsert(f.ctx, &core.User{Username: "ada", PasswordHash: "h2", Role: "viewer", CreatedAt: f.at(time.Hour), SessionEpoch: 2}), "update user")
	u, err := f.st.UserGet(f.ctx, "ada")
	must(t, err, "get user")
	if diff := cmp.Diff(&core.User{Username: "ada", PasswordHash: "h2", Role: "viewer", CreatedAt: f.now, SessionEpoch: 2}, u); diff != "" {
		t.Errorf("user (-want +got), creation time kept:\n%s", diff)
	}
	_, err = f.st.UserGet(f.ctx, "nobody")
	wantErr(t, err, core.ErrNotFound, "get unknown user")
	must(t, f.st.UserUpsert(f.ctx, &core.User{Username: "bob", PasswordHash: "h3", Role: "op", CreatedAt: f.now}), "create bob")
	must(t, f.st.UserUpsert(f.ctx, &core.User{Username: "al", PasswordHash: "h4", Role: "op", CreatedAt: f.now}), "create al")
	users, err := f.st.UserList(f.ctx, &store.UserListParams{Page: store.Page{Limit: 2}})
	must(t, err, "list users")
	n, err := f.st.UserCount(f.ctx, &store.UserListParams{})
	must(t, err, "count users")
	if len(users) != 2 || users[0].Username != "ada" || users[1].Username != "al" || users[0].Role != "viewer" || n != 3 {
		t.Errorf("users page = %+v of %d, want ada and al (by name) of 3", users, n)
	}
	ops, err := f.st.UserList(f.ctx, &store.UserListParams{Role: "op"})
	must(t, err, "list ops")
	nOps, err := f.st.UserCount(f.ctx, &store.UserListParams{Role: "op"})
	must(t, err, "count ops")
	if len(ops) != 2 || ops[0].Username != "al" || ops[1].Username != "bob" || nOps != 2 {
		t.Errorf("ops = %+v of %d, want al and bob", ops, nOps)
	}
	byRole, err := f.st.UserList(f.ctx, &store.UserListParams{Page: store.Page{OrderBy: "-role", Offset: 2}})
	must(t, err, "list users by role")
	if len(byRole) != 1 || byRole[0].Role != "op" {
		t.Errorf("third user by role descending = %+v, want an op", byRole)
	}

	exp := f.at(24 * time.Hour)
	tok := &core.APIToken{Name: "ci", Username: "ada", Hash: "sha-1", CreatedAt: f.now, ExpiresAt: &exp}
	must(t, f.st.APITokenCreate(f.ctx, tok), "create token")
	if tok.ID == "" {
		t.Fatal("token id not assigned")
	}
	must(t, f.st.APITokenCreate(f.ctx, &core.APIToken{ID: "t2", Name: "cli", Username: "ada", Hash: "sha-2",
		CreatedAt: f.at(time.Second)}), "create token 2")
	wantErr(t, f.st.APITokenCreate(f.ctx, &core.APIToken{ID: "t3", Name: "dup", Username: "ada", Hash: "sha-1",
		CreatedAt: f.now}), core.ErrConflict, "duplicate token hash")
	wantErr(t, f.st.APITokenCreate(f.ctx, &core.APIToken{ID: "t4", Name: "x", Username: "nobody", Hash: "sha-4",
		CreatedAt: f.now}), core.ErrNotFound, "token of unknown user")
	got, err := f.st.APITokenGet(f.ctx, "sha-1")
	must(t, err, "get token")
	if diff := cmp.Diff(tok, got); diff != "" {
		t.Errorf("token (-want +got):\n%s", diff)
	}
	list, err := f.st.APITokenList(f.ctx)
	must(t, err, "list tokens")
	if len(list) != 2 || list[0].ID != tok.ID || list[1].ID != "t2" || list[1].ExpiresAt != nil {
		t.Errorf("tokens = %+v, want two, oldest first", list)
	}
	must(t, f.st.APITokenDelete(f.ctx, tok.ID), "delete token")
	_, err = f.st.APITokenGet(f.ctx, "sha-1")
	wantErr(t, err, core.ErrNotFound, "get deleted token")
	wantErr(t, f.st.APITokenDelete(f.ctx, tok.ID), core.ErrNotFound, "delete twice")

	// The tokens of one user with one name go together (a new password's
	// revocation of its login tokens), no other.
	for i, tk := range []core.APIToken{{Name: core.LoginTokenName, Username: "ada"}, {Name: core.LoginTokenName, Username: "ada"},
		{Name: core.LoginTokenName, Username: "bob"}} {
		tk.Hash, tk.CreatedAt = fmt.Sprintf("sha-login-%d", i), f.now
		must(t, f.st.APITokenCreate(f.ctx, &tk), "create login token")
	}
	deleted, err := f.st.APITokenDeleteNamed(f.ctx, "ada", core.LoginTokenName)
	must(t, err, "delete ada's login tokens")
	list, err = f.st.APITokenList(f.ctx)
	must(t, err, "list tokens")
	if deleted != 2 || len(list) != 2 || list[0].Username != "bob" || list[1].ID != "t2" {
		t.Errorf("after deleting ada's login tokens (%d): %+v, want ada's cli token and bob's login token", deleted, list)
	}

	// Deleting a user deletes its tokens.
	must(t, f.st.UserDelete(f.ctx, "ada"), "delete user")
	_, err = f.st.UserGet(f.ctx, "ada")
	wantErr(t, err, core.ErrNotFound, "get deleted user")
	_, err = f.st.APITokenGet(f.ctx, "sha-2")
	wantErr(t, err, core.ErrNotFound, "token of deleted user")
	wantErr(t, f.st.UserDelete(f.ctx, "ada"), core.ErrNotFound, "delete user twice")
}

func testConnections(t *testing.T, f *fixture) {
	must(t, f.st.ConnectionUpsert(f.ctx, &core.Connection{ID: "wh", URI: "postgres://a@h/db"}), "create")
	must(t, f.st.ConnectionUpsert(f.ctx, &core.Connection{ID: "api", URI: "https://x"}), "create 2")
	must(t, f.st.ConnectionUpsert(f.ctx, &core.Connection{ID: "wh", URI: "postgres://b@h/db"}), "replace")
	c, err := f.st.ConnectionGet(f.ctx, "wh")
	must(t, err, "get")
	if c.URI != "postgres://b@h/db" {
		t.Errorf("uri = %s, want replaced", c.URI)
	}
	list, err := f.st.ConnectionList(f.ctx, &store.ConnectionListParams{})
	must(t, err, "list")
	if diff := cmp.Diff([]core.Connection{{ID: "api", URI: "https://x"}, {ID: "wh", URI: "postgres://b@h/db"}}, list); diff != "" {
		t.Errorf("connections (-want +got):\n%s", diff)
	}
	must(t, f.st.ConnectionDelete(f.ctx, "wh"), "delete")
	_, err = f.st.ConnectionGet(f.ctx, "wh")
	wantErr(t, err, core.ErrNotFound, "get deleted")
	wantErr(t, f.st.ConnectionDelete(f.ctx, "wh"), core.ErrNotFound, "delete twice")
}

func testPools(t *testing.T, f *fixture) {
	pools, err := f.st.PoolList(f.ctx, &store.PoolListParams{})
	must(t, err, "list")
	if len(pools) != 1 || pools[0].Name != core.DefaultPool || pools[0].Slots != 128 {
		t.Fatalf("pools of a new database = %+v, want default_pool with 128 slots", pools)
	}
	must(t, f.st.PoolUpsert(f.ctx, &core.Pool{Name: "gpu", Slots: 2, Description: "cards"}), "create")
	must(t, f.st.PoolUpsert(f.ctx, &core.Pool{Name: core.DefaultPool, Slots: 16}), "resize default")
	pools, err = f.st.PoolList(f.ctx, &store.PoolListParams{})
	must(t, err, "list")
	want := []core.Pool{{Name: core.DefaultPool, Slots: 16}, {Name: "gpu", Slots: 2, Description: "cards"}}
	if diff := cmp.Diff(want, pools); diff != "" {
		t.Errorf("pools (-want +got):\n%s", diff)
	}
	wantErr(t, f.st.PoolDelete(f.ctx, core.DefaultPool), core.ErrInvalid, "delete default pool")
	wantErr(t, f.st.PoolUpsert(f.ctx, &core.Pool{Name: "neg", Slots: -1}), core.ErrInvalid, "negative slots")
	must(t, f.st.PoolDelete(f.ctx, "gpu"), "delete")
	wantErr(t, f.st.PoolDelete(f.ctx, "gpu"), core.ErrNotFound, "delete twice")
}

func testJobsAudit(t *testing.T, f *fixture) {
	must(t, f.st.JobHeartbeat(f.ctx, &core.Job{ID: "j1", Role: "scheduler", Hostname: "h", PID: 1, StartedAt: f.now, Heartbeat: f.now}), "job 1")
	must(t, f.st.JobHeartbeat(f.ctx, &core.Job{ID: "j2", Role: "api-server", Hostname: "h", PID: 2, StartedAt: f.now, Heartbeat: f.now}), "job 2")
	must(t, f.st.JobHeartbeat(f.ctx, &core.Job{ID: "j2", Role: "api-server", Hostname: "h", PID: 2, StartedAt: f.now,
		UpSince: f.at(30 * time.Second), Heartbeat: f.at(40 * time.Second)}), "job 2 beat after an outage")
	must(t, f.st.JobHeartbeat(f.ctx, &core.Job{ID: "j1", Role: "scheduler", Hostname: "h", PID: 1,
		StartedAt: f.at(time.Hour), Heartbeat: f.at(time.Minute)}), "job 1 beat")
	jobs, err := f.st.JobList(f.ctx)
	must(t, err, "list jobs")
	want := []core.Job{
		{ID: "j2", Role: "api-server", Hostname: "h", PID: 2, StartedAt: f.now, UpSince: f.at(30 * time.Second), Heartbeat: f.at(40 * time.Second)},
		{ID: "j1", Role: "scheduler", Hostname: "h", PID: 1, StartedAt: f.now, Heartbeat: f.at(time.Minute)},
	}
	if diff := cmp.Diff(want, jobs); diff != "" {
		t.Errorf("jobs (-want +got), start time kept from the first heartbeat, the run of beats from the last:\n%s", diff)
	}

	for i, action := range []string{"dag.pause", "dag.unpause", "task_instance.clear"} {
		e := &core.AuditEntry{When: f.at(time.Duration(i) * time.Second), User: "ada", Action: action, Target: "etl", Detail: "d"}
		must(t, f.st.AuditLogAdd(f.ctx, e), "audit")
		if e.ID == 0 {
			t.Fatal("audit entry id not assigned")
		}
	}
	entries, err := f.st.AuditLogList(f.ctx, &store.AuditLogListParams{Page: store.Page{Limit: 2}})
	must(t, err, "list audit")
	if len(entries) != 2 || entries[0].Action != "task_instance.clear" || entries[1].Action != "dag.unpause" ||
		!entries[0].When.Equal(f.at(2*time.Second)) {
		t.Errorf("audit = %+v, want the two newest, newest first", entries)
	}
	all, err := f.st.AuditLogList(f.ctx, &store.AuditLogListParams{})
	must(t, err, "list all")
	if len(all) != 3 {
		t.Errorf("audit with no limit: %d entries, want 3", len(all))
	}
	// A target keeps the entries about it and under it, not a name that
	// only begins alike (an underscore is no wildcard).
	for _, target := range []string{"etl/r1", "etl/r1/load", "etl_x", "etlx/r1"} {
		must(t, f.st.AuditLogAdd(f.ctx, &core.AuditEntry{When: f.at(time.Minute), User: "ada", Action: "x", Target: target}), "audit "+target)
	}
	for target, want := range map[string]int{"etl": 5, "etl/r1": 2, "etl_": 0, "etl%": 0} {
		if n, err := f.st.AuditLogCount(f.ctx, &store.AuditLogListParams{Target: target}); err != nil || n != want {
			t.Errorf("audit of target %q: %d entries, %v; want %d", target, n, err, want)
		}
	}
}

// testRoundTrip: the median ping is a positive duration, and a cancelled
// context is an error, not a time.
func testRoundTrip(t *testing.T, f *fixture) {
	rt, err := f.st.RoundTrip(f.ctx, 5)
	must(t, err, "round trip")
	if rt <= 0 || rt > 5*time.Second {
		t.Errorf("round trip = %v, want a positive duration of a ping", rt)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	cancel()
	if rt, err := f.st.RoundTrip(ctx, 5); err == nil {
		t.Errorf("round trip with a cancelled context = %v, nil error; want the cancellation", rt)
	}
}

// testUserCountLock: a transaction's locked count of users holds until it
// ends: a concurrent change of a counted user waits for it (the last
// admin's check then sees every concurrent demotion or deletion).
func testUserCountLock(t *testing.T, f *fixture) {
	for _, u := range []string{"root", "ada"} {
		must(t, f.st.UserUpsert(f.ctx, &core.User{Username: u, PasswordHash: "h", Role: "admin", CreatedAt: f.now}), "create "+u)
	}
	changed := make(chan error, 1)
	err := f.st.WithTx(f.ctx, func(tx store.Store) error {
		n, err := tx.UserCount(f.ctx, &store.UserListParams{Role: "admin", Lock: true})
		if err != nil || n != 2 {
			return fmt.Errorf("locked count = %d, %w; want 2", n, err)
		}
		go func() {
			changed <- f.st.UserUpsert(f.ctx, &core.User{Username: "ada", PasswordHash: "h", Role: "viewer", CreatedAt: f.now})
		}()
		select {
		case err := <-changed:
			return fmt.Errorf("a counted user changed while the count's transaction ran (%w)", err)
		case <-time.After(300 * time.Millisecond):
		}
		return nil
	})
	must(t, err, "locked count")
	select {
	case err := <-changed:
		must(t, err, "the change after the transaction")
	case <-time.After(10 * time.Second):
		t.Fatal("the change waited past the transaction's end")
	}
}

// testListSearch: connections, variables and pools are listed and counted
// by a text their id, key or name contains, ignoring case, with % and _
// taken literally (Airflow's *_pattern parameters).
func testListSearch(t *testing.T, f *fixture) {
	for _, id := range []string{"Warehouse_EU", "warehouse-us", "api", "wh%all"} {
		must(t, f.st.ConnectionUpsert(f.ctx, &core.Connection{ID: id, URI: "postgres://h"}), "connection "+id)
		must(t, f.st.VariableUpsert(f.ctx, &core.Variable{Key: id, Value: "v"}), "variable "+id)
		must(t, f.st.PoolUpsert(f.ctx, &core.Pool{Name: id, Slots: 1}), "pool "+id)
	}
	for _, tc := range []struct {
		search string
		want   []string
	}{
		{"warehouse", []string{"Warehouse_EU", "warehouse-us"}},
		{"E_", []string{"Warehouse_EU"}}, // _ is no wildcard
		{"%", []string{"wh%all"}},
		{"nope", nil},
	} {
		conns, err := f.st.ConnectionList(f.ctx, &store.ConnectionListParams{Search: tc.search})
		must(t, err, "list connections")
		vars, err := f.st.VariableList(f.ctx, &store.VariableListParams{Search: tc.search})
		must(t, err, "list variables")
		pools, err := f.st.PoolList(f.ctx, &store.PoolListParams{Search: tc.search})
		must(t, err, "list pools")
		var gotC, gotV, gotP []string
		for _, c := range conns {
			gotC = append(gotC, c.ID)
		}
		for _, v := range vars {
			gotV = append(gotV, v.Key)
		}
		for _, p := range pools {
			gotP = append(gotP, p.Name)
		}
		nc, _ := f.st.ConnectionCount(f.ctx, &store.ConnectionListParams{Search: tc.search})
		nv, _ := f.st.VariableCount(f.ctx, &store.VariableListParams{Search: tc.search})
		np, _ := f.st.PoolCount(f.ctx, &store.PoolListParams{Search: tc.search})
		if !slices.Equal(gotC, tc.want) || !slices.Equal(gotV, tc.want) || !slices.Equal(gotP, tc.want) ||
			nc != len(tc.want) || nv != len(tc.want) || np != len(tc.want) {
			t.Errorf("search %q: connections %v (%d), variables %v (%d), pools %v (%d); want %v", tc.search,
				gotC, nc, gotV, nv, gotP, np, tc.want)
		}
	}
}
