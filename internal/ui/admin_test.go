package ui_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// The admin page shows each process's heartbeat health, the pools and
// the connections with their passwords masked; only an admin sees it.
func TestAdminPage(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, st store.Store) {
		e := newEnv(t, st)
		ctx := t.Context()
		now := e.clk.Now()
		for _, j := range []core.Job{
			{ID: "s1", Role: "scheduler", Hostname: "h1", PID: 10, StartedAt: now.Add(-time.Hour), Heartbeat: now.Add(-5 * time.Second)},
			{ID: "w1", Role: "worker", Hostname: "h2", PID: 20, StartedAt: now.Add(-time.Hour), Heartbeat: now.Add(-10 * time.Minute)},
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
		for _, want := range []string{"<th scope=\"row\">scheduler</th>", "5 s ago", "✓</span> healthy", "10 min ago", "✗</span> no heartbeat",
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
