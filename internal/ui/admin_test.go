package ui_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// The admin page shows each role's health (healthy processes of all, the
// newest heartbeat) and each process's heartbeat, the pools and
// the connections with their passwords masked; only an admin sees it.
func TestAdminPage(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		ctx := t.Context()
		now := e.clk.Now()
		for _, j := range []core.Job{
			{ID: "s1", Role: "scheduler", Hostname: "h1", PID: 10, StartedAt: now.Add(-time.Hour), Heartbeat: now.Add(-5 * time.Second)},
			{ID: "w1", Role: "worker", Hostname: "h2", PID: 20, StartedAt: now.Add(-time.Hour), Heartbeat: now.Add(-10 * time.Minute),
				WorkerID: "wk-1", Version: "1.2.3"},
		} {
			if err := st.JobHeartbeat(ctx, &j); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.PoolUpsert(ctx, &core.Pool{Name: "db", Slots: 4, Description: "warehouse"}); err != nil {
			t.Fatal(err)
		}
		if err := st.ConnectionUpsert(ctx, &core.Connection{ID: "warehouse", URI: "postgres://etl:s3cret-pw@db.internal/dw"}); err != nil {
			t.Fatal(err)
		}
		admin := e.loggedIn(core.RoleAdmin)
		r := admin.get("/admin")
		if r.status != http.StatusOK {
			t.Fatalf("admin page: %d\n%s", r.status, r.body)
		}
		for _, want := range []string{"<th scope=\"row\">scheduler</th>", "5 s ago",
			`<tr><th scope="row">scheduler</th><td><span class="badge s-success"><span aria-hidden="true">✓</span> healthy</span></td><td>1 of 1</td><td>5 s ago</td></tr>`,
			`<tr><th scope="row">worker</th><td><span class="badge s-failed"><span aria-hidden="true">✗</span> unhealthy</span></td><td>0 of 1</td><td>10 min ago</td></tr>`,
			`<tr><th scope="row">triggerer</th><td><span class="badge s-none"><span aria-hidden="true">·</span> none reported</span></td>`, "✓</span> healthy", "10 min ago", "✗</span> stale",
			`<tr><th scope="row">dag-processor</th><td><span class="badge s-none">`,
			`<tr><th scope="row">worker <small class="muted">wk-1</small></th><td>h2</td><td>20</td><td>1.2.3</td>`,
			"<th scope=\"row\">db</th><td>4</td>", "<code>warehouse</code>", "db.internal/dw", `href="/admin"`} {
			if !strings.Contains(r.body, want) {
				t.Errorf("admin page lacks %s", want)
			}
		}
		if strings.Contains(r.body, "s3cret-pw") {
			t.Error("the admin page shows a connection's password")
		}
		op := e.loggedIn(core.RoleOp)
		if r := op.get("/admin"); r.status != http.StatusForbidden {
			t.Errorf("op GET /admin: %d, want 403", r.status)
		}
		if strings.Contains(op.get("/dags").body, `href="/admin"`) {
			t.Error("an op's menu links the admin page")
		}
	})
}

// An admin creates, changes and deletes a pool, adds and deletes a
// connection (its password never shown back, not even in an error),
// creates a user, and creates (secret shown once) and revokes an API
// token, each audited; an op is refused every one of these forms.
func TestAdminEdits(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		ctx := t.Context()
		admin := e.loggedIn(core.RoleAdmin)
		page := admin.get("/admin")
		csrf := csrfOf(t, page.body)
		post := func(path string, v url.Values) response {
			t.Helper()
			v.Set("csrf", csrf)
			return admin.post(path, v)
		}
		mustSee := func(r response, what string) {
			t.Helper()
			if r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/admin") {
				t.Fatalf("%s: %d to %q\n%s", what, r.status, r.header.Get("Location"), r.body)
			}
		}

		mustSee(post("/admin/pools", url.Values{"mode": {"create"}, "name": {"gpu"}, "slots": {"2"}, "description": {"cards"}}), "create pool")
		if r := post("/admin/pools", url.Values{"mode": {"create"}, "name": {"gpu"}, "slots": {"3"}}); r.status != http.StatusConflict {
			t.Errorf("create an existing pool: %d, want 409", r.status)
		}
		if r := post("/admin/pools", url.Values{"name": {"gpu"}, "slots": {"many"}}); r.status != http.StatusBadRequest || !strings.Contains(r.body, "slots") {
			t.Errorf("slots not a number: %d, want 400 naming slots", r.status)
		}
		mustSee(post("/admin/pools", url.Values{"name": {"gpu"}, "slots": {"5"}, "description": {"cards"}}), "update pool")
		if pools, _ := st.PoolList(ctx, &store.PoolListParams{Names: []string{"gpu"}}); len(pools) != 1 || pools[0].Slots != 5 {
			t.Errorf("gpu pool after update = %+v, want 5 slots", pools)
		}
		if r := admin.get("/admin"); !strings.Contains(r.body, `aria-label="Delete pool gpu"`) {
			t.Error("the admin page has no delete button for the new pool")
		}
		mustSee(post("/admin/pools/gpu/delete", url.Values{}), "delete pool")

		if r := post("/admin/connections", url.Values{"connection_id": {"dw"}, "uri": {"not a uri hunter2"}}); r.status != http.StatusBadRequest ||
			strings.Contains(r.body, "hunter2") {
			t.Errorf("bad connection URI: %d, want 400 without the URI:\n%s", r.status, r.body)
		}
		mustSee(post("/admin/connections", url.Values{"connection_id": {"dw"}, "uri": {"postgres://etl:hunter2@db/dw"}}), "add connection")
		if r := post("/admin/connections", url.Values{"connection_id": {"dw"}, "uri": {"postgres://etl:hunter3@db/dw"}}); r.status != http.StatusConflict ||
			strings.Contains(r.body, "hunter3") {
			t.Errorf("add an existing connection without replace: %d, want 409 without the URI", r.status)
		}
		if r := admin.get("/admin"); !strings.Contains(r.body, "<code>dw</code>") || strings.Contains(r.body, "hunter2") {
			t.Errorf("admin page after adding dw: want it listed and its password masked:\n%s", r.body)
		}
		mustSee(post("/admin/connections/dw/delete", url.Values{}), "delete connection")

		mustSee(post("/admin/users", url.Values{"username": {"carl"}, "password": {"carl-pw"}, "role": {"op"}}), "create user")
		if r := post("/admin/users", url.Values{"username": {"dora"}, "password": {"x"}, "role": {"root"}}); r.status != http.StatusBadRequest {
			t.Errorf("unknown role: %d, want 400", r.status)
		}
		if b := e.browser(); b.login("carl", "carl-pw", "").status != http.StatusSeeOther {
			t.Error("the user created from the admin page cannot log in")
		}

		if r := post("/admin/tokens", url.Values{"username": {"carl"}, "ttl": {"soon"}}); r.status != http.StatusBadRequest || !strings.Contains(r.body, "lifetime") {
			t.Errorf("bad lifetime: %d, want 400 naming it", r.status)
		}
		r := post("/admin/tokens", url.Values{"username": {"carl"}, "name": {"deploy"}, "ttl": {"30d"}})
		m := regexp.MustCompile(`<pre class="secret"[^>]*>(weir_[^<]+)</pre>`).FindStringSubmatch(r.body)
		if r.status != http.StatusOK || m == nil {
			t.Fatalf("create token: %d, want the secret shown:\n%s", r.status, r.body)
		}
		toks, _ := st.APITokenList(ctx)
		if len(toks) != 1 || toks[0].Name != "deploy" || toks[0].ExpiresAt == nil {
			t.Fatalf("tokens = %+v, want deploy expiring", toks)
		}
		if p := admin.get("/admin"); strings.Contains(p.body, m[1]) || !strings.Contains(p.body, "Revoke token deploy of carl") {
			t.Error("the admin page shows the token's secret or no revoke button")
		}
		mustSee(post("/admin/tokens/"+toks[0].ID+"/revoke", url.Values{}), "revoke token")
		if left, _ := st.APITokenList(ctx); len(left) != 0 {
			t.Errorf("tokens after revoke = %+v", left)
		}

		var actions []string
		for _, a := range []string{"pool.create", "pool.update", "pool.delete", "connection.create", "connection.delete", "user.upsert", "api_token.create", "api_token.revoke"} {
			if es, _ := st.AuditLogList(ctx, &store.AuditLogListParams{Action: a, User: "admin"}); len(es) != 1 {
				actions = append(actions, a)
			}
		}
		if len(actions) > 0 {
			t.Errorf("no single audit entry by admin for %v", actions)
		}

		op := e.loggedIn(core.RoleOp)
		opCSRF := csrfOf(t, op.get("/dags").body)
		for _, path := range []string{"/admin/pools", "/admin/connections", "/admin/users", "/admin/tokens", "/admin/pools/default_pool/delete"} {
			if r := op.post(path, url.Values{"csrf": {opCSRF}, "name": {"x"}, "slots": {"1"}, "mode": {"create"}, "connection_id": {"x"},
				"uri": {"http://x"}, "username": {"op"}, "password": {"p"}, "role": {"admin"}}); r.status != http.StatusForbidden {
				t.Errorf("op posts %s: %d, want 403", path, r.status)
			}
		}
		if u, _ := st.UserGet(ctx, "op"); u.Role != "op" {
			t.Errorf("op's role after a refused post = %s", u.Role)
		}
	})
}
