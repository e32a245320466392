package ui

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// runsPageSize is how many runs one page of a DAG's runs list shows.
const runsPageSize = 50

// runStates and runTypes are the runs list's filter choices.
var (
	runStates = []string{string(core.RunQueued), string(core.RunRunning), string(core.RunSuccess), string(core.RunFailed)}
	runTypes  = []string{string(core.RunManual), string(core.RunScheduled), string(core.RunAssetTriggered), string(core.RunBackfill)}
)

// runsFilter is the runs list's filter as the form shows it.
type runsFilter struct {
	States, Types []option
	From, To      string // as typed: YYYY-MM-DD or RFC 3339
}

// runsData is the runs list's model.
type runsData struct {
	Dag    core.DagModel
	Filter runsFilter
	Runs   []runRow
	Pager  pager
	Back   string
}

// runRow is one run of the list.
type runRow struct {
	core.DagRun
	Duration string
}

// runsPage lists a DAG's runs, newest first, filtered by state, run type
// and a logical-date range, paged in the database.
func (u *UI) runsPage(w http.ResponseWriter, r *http.Request, req *request) {
	dagID := r.PathValue("dag_id")
	dag, err := u.st.DagGet(r.Context(), dagID)
	if err != nil {
		u.failErr(w, r, req, fmt.Errorf("dag_id %q: %w", dagID, err))
		return
	}
	f, p, err := parseRunsFilter(r.URL.Query())
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	p.DagID = dagID
	list, total, offset, err := readPage(r, p, &p.Page, runsPageSize, u.st.DagRunList, u.st.DagRunCount)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	d := runsData{Dag: *dag, Filter: f, Back: r.URL.RequestURI(), Pager: newPager(r.URL, "offset", offset, runsPageSize, len(list), total)}
	now := u.clk.Now()
	for _, run := range list {
		d.Runs = append(d.Runs, runRow{DagRun: run, Duration: span(run.StartDate, run.EndDate, now)})
	}
	u.render(w, r, http.StatusOK, "runs", req, dagID+" runs", d)
}

// parseRunsFilter reads the runs list's query parameters: state and
// run_type ("all" or absent for any), from and to (a logical-date range,
// both ends included; a bare date YYYY-MM-DD is that whole day in UTC, as
// the pages show times). A bad value is core.ErrInvalid naming the
// parameter and what it allows.
func parseRunsFilter(q url.Values) (runsFilter, *store.DagRunListParams, error) {
	p := &store.DagRunListParams{}
	state, err := choiceParam(q, "state", runStates)
	if err != nil {
		return runsFilter{}, nil, err
	}
	typ, err := choiceParam(q, "run_type", runTypes)
	if err != nil {
		return runsFilter{}, nil, err
	}
	if state != "all" {
		p.States = []core.DagRunState{core.DagRunState(state)}
	}
	if typ != "all" {
		p.RunTypes = []core.RunType{core.RunType(typ)}
	}
	f := runsFilter{States: statusOptions(state, runStates...), Types: statusOptions(typ, runTypes...), From: q.Get("from"), To: q.Get("to")}
	if p.LogicalDateGTE, err = dateParam("from", f.From, false); err != nil {
		return runsFilter{}, nil, err
	}
	if p.LogicalDateLTE, err = dateParam("to", f.To, true); err != nil {
		return runsFilter{}, nil, err
	}
	if p.LogicalDateGTE != nil && p.LogicalDateLTE != nil && p.LogicalDateLTE.Before(*p.LogicalDateGTE) {
		return runsFilter{}, nil, fmt.Errorf("%w: %w", &badParam{name: "to", value: f.To, want: "on or after from (" + f.From + ")"}, core.ErrInvalid)
	}
	return f, p, nil
}

// choiceParam reads a filter that is "all" (or absent) or one of allowed.
func choiceParam(q url.Values, name string, allowed []string) (string, error) {
	s := q.Get(name)
	if s == "" || s == "all" {
		return "all", nil
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	want := "all"
	for _, a := range allowed {
		want += ", " + a
	}
	return "", fmt.Errorf("%w: %w", &badParam{name: name, value: s, want: "one of " + want}, core.ErrInvalid)
}

// dateParam reads a date bound: "" is none; YYYY-MM-DD is the day's start
// (or, with end, its last microsecond) in UTC; otherwise RFC 3339.
func dateParam(name, s string, end bool) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		if end {
			t = t.AddDate(0, 0, 1).Add(-time.Microsecond)
		}
		return &t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", &badParam{name: name, value: s, want: "a date (2026-03-01) or a time (2026-03-01T12:00:00Z)"}, core.ErrInvalid)
	}
	return &t, nil
}
