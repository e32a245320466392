package ui

import (
	"net/http"
	"time"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/job"
	"github.com/weirflow/weir/internal/store"
)

// healthyWithin is how old a role's last heartbeat may be for it to show
// as healthy (the REST API's health threshold).
const healthyWithin = 30 * time.Second

// adminData is the admin page's model.
type adminData struct {
	Roles       []roleHealth // per role: healthy processes, newest heartbeat
	Jobs        []jobRow
	Pools       []core.Pool
	Connections []connRow
	ConnTotal   int
	Users       []core.User
	UserTotal   int
	Tokens      []core.APIToken // without their hashes
	UserRoles   []string
}

// jobRow is one running Weir process and how recent its heartbeat is.
type jobRow struct {
	core.Job
	Age     string
	Healthy bool
}

// connRow is a connection with its URI's secrets masked.
type connRow struct {
	ID, URI string
}

// adminPage shows the health of each role's processes (their heartbeats),
// the pools with their occupancy, the connections (passwords never shown
// back), the users and the API tokens, each with its forms (adminedit.go).
func (u *UI) adminPage(w http.ResponseWriter, r *http.Request, req *request) {
	ctx := r.Context()
	jobs, err := u.st.JobList(ctx)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	now := u.clk.Now()
	var d adminData
	judged := job.Judge(jobs, now, healthyWithin)
	for _, in := range judged.Instances {
		d.Jobs = append(d.Jobs, jobRow{Job: in.Job, Age: roundDur(in.Age), Healthy: in.State == job.StateHealthy})
	}
	d.Roles = summarizeHealth(&judged, now)
	if d.Pools, err = u.st.PoolList(ctx, &store.PoolListParams{WithOccupancy: true, Page: store.Page{Limit: 200}}); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	conns, total, err := store.List(ctx, &store.ConnectionListParams{Page: store.Page{Limit: 200}}, u.st.ConnectionList, u.st.ConnectionCount)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	d.ConnTotal = total
	for _, c := range conns {
		d.Connections = append(d.Connections, connRow{ID: c.ID, URI: api.ShownURI(c)})
	}
	if d.Users, d.UserTotal, err = store.List(ctx, &store.UserListParams{Page: store.Page{Limit: 200}}, u.st.UserList, u.st.UserCount); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	if d.Tokens, err = u.st.APITokenList(ctx); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	for i := range d.Tokens {
		d.Tokens[i].Hash = ""
	}
	d.UserRoles = []string{string(core.RoleViewer), string(core.RoleOp), string(core.RoleAdmin)}
	u.render(w, r, http.StatusOK, "admin", req, "Admin", d)
}
