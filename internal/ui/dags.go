package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// dagsPageSize is how many DAGs one page of the list shows.
const dagsPageSize = 50

// recentRuns is how many of its newest runs each DAG shows as squares.
const recentRuns = 10

// dagsData is the DAGs list's model.
type dagsData struct {
	Query, Tag, Status string // the filters as asked
	Dags               []dagRow
	Total              int
	Pager              pager
	ImportErrors       []core.ImportError
	ImportErrorTotal   int
	Back               string // this page's URL, where forms return
}

// dagRow is one DAG and its newest runs, oldest first.
type dagRow struct {
	core.DagModel
	Runs []core.DagRun
}

// dagsPage shows the DAGs list: filters, one page of DAGs with their last
// runs, and the import errors banner.
func (u *UI) dagsPage(w http.ResponseWriter, r *http.Request, req *request) {
	q := r.URL.Query()
	d := dagsData{Query: q.Get("q"), Tag: q.Get("tag"), Back: r.URL.RequestURI()}
	p := &store.DagListParams{OnlyActive: true, Search: d.Query}
	if d.Tag != "" {
		p.Tags = []string{d.Tag}
	}
	var err error
	if d.Status, p.Paused, err = statusParam(q, "paused", "active"); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	dags, total, offset, err := readPage(r, p, &p.Page, dagsPageSize, u.st.DagList, u.st.DagCount)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	d.Total, d.Pager = total, newPager(r.URL, "offset", offset, dagsPageSize, len(dags), total)
	if d.Dags, err = u.withRecentRuns(r, dags); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	ie := &store.ImportErrorListParams{Page: store.Page{Limit: 5}}
	if d.ImportErrors, d.ImportErrorTotal, err = store.List(r.Context(), ie, u.st.ImportErrorList, u.st.ImportErrorCount); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	u.render(w, r, http.StatusOK, "dags", req, "DAGs", d)
}

// withRecentRuns pairs each DAG with its newest runs, read in one query.
func (u *UI) withRecentRuns(r *http.Request, dags []core.DagModel) ([]dagRow, error) {
	ids := make([]string, len(dags))
	for i, d := range dags {
		ids[i] = d.DagID
	}
	runs, err := u.st.DagRunRecent(r.Context(), &store.DagRunRecentParams{DagIDs: ids, PerDag: recentRuns})
	if err != nil {
		return nil, err
	}
	byDag := map[string][]core.DagRun{}
	for _, run := range runs {
		byDag[run.DagID] = append(byDag[run.DagID], run)
	}
	rows := make([]dagRow, len(dags))
	for i, d := range dags {
		rows[i] = dagRow{DagModel: d, Runs: byDag[d.DagID]}
	}
	return rows, nil
}

// setPaused pauses or unpauses a DAG (form field paused=true|false)
// through the service, then returns to the page the form was on.
func (u *UI) setPaused(w http.ResponseWriter, r *http.Request, req *request) {
	paused, err := strconv.ParseBool(r.PostFormValue("paused"))
	if err != nil {
		u.fail(w, r, req, http.StatusBadRequest, "paused must be true or false, not "+strconv.Quote(r.PostFormValue("paused"))+"; nothing was changed.")
		return
	}
	if _, err := u.svc.SetDagPaused(r.Context(), actor(req), r.PathValue("dag_id"), paused); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	back(w, r, "/dags")
}

// actor is the caller as the services see it.
func actor(req *request) core.Actor { return core.Actor{Name: req.User.Username, Role: req.Role} }

// back redirects (303) to the form's "back" field when it is a path on this
// site, else to fallback.
func back(w http.ResponseWriter, r *http.Request, fallback string) {
	to := localPath(r.PostFormValue("back"))
	if to == "" {
		to = fallback
	}
	http.Redirect(w, r, to, http.StatusSeeOther) //nolint:gosec // localPath keeps paths on this site only
}

// offsetParam reads an offset query parameter (default 0); a bad one is
// core.ErrInvalid naming it.
func offsetParam(q url.Values, name string) (int, error) {
	s := q.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %w", &badParam{name: name, value: s, want: "a whole number of 0 or more"}, core.ErrInvalid)
	}
	return n, nil
}

// readPage reads one page of a list (?offset=, size entries) and its
// total, in the database: p's page gets the limit and offset (its order
// stays), then store.List runs.
func readPage[P, T any](r *http.Request, p *P, page *store.Page, size int,
	list func(context.Context, *P) ([]T, error), count func(context.Context, *P) (int, error)) (items []T, total, offset int, err error) {
	if offset, err = offsetParam(r.URL.Query(), "offset"); err != nil {
		return nil, 0, 0, err
	}
	page.Limit, page.Offset = size, offset
	items, total, err = store.List(r.Context(), p, list, count)
	return items, total, offset, err
}

// statusParam reads the "status" filter: "all" (or absent: nil), yes
// (true) or no (false); anything else is core.ErrInvalid naming the three.
func statusParam(q url.Values, yes, no string) (string, *bool, error) {
	s := q.Get("status")
	switch s {
	case "", "all":
		return "all", nil, nil
	case yes, no:
		v := s == yes
		return s, &v, nil
	}
	return "", nil, fmt.Errorf("%w: %w", &badParam{name: "status", value: s, want: "all, " + no + " or " + yes}, core.ErrInvalid)
}

// badParam is a query parameter the page cannot use.
type badParam struct{ name, value, want string }

func (e *badParam) Error() string {
	return e.name + " must be " + e.want + ", not " + strconv.Quote(e.value) + "."
}
