package ui

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
)

// xcomPageSize is how many XCom entries the task-instance page shows.
const xcomPageSize = 50

// tiData is the task-instance page's model.
type tiData struct {
	TI core.TaskInstance
	// Head is the page's live part (tihead.go), HeadHTML its rendering.
	Head       *tiHead
	HeadHTML   template.HTML
	Try        int // the try whose log is shown
	Log        string
	LogSkipped int64  // bytes of the log's start not shown (its end is)
	Download   string // the shown try's whole log as a file
	TailURL    string // the REST API's log URL to tail from (set while the shown try may still write)
	XComs      []xcomRow
	XComMore   int // entries beyond the first page
	State      *statePanel
	Base       string // this instance's page URL
	Back       string
}

// xcomRow is one XCom entry, its value indented.
type xcomRow struct {
	core.XCom
	Pretty string
}

// tiPage shows a task instance (?map_index=, ?try=): its live head (state,
// tries, the trigger it waits on, its stream), the log of one try
// (live-tailed while it runs), its XCom and its task state panel.
func (u *UI) tiPage(w http.ResponseWriter, r *http.Request, req *request) {
	ctx := r.Context()
	key, ti, err := u.loadTI(r)
	var mapped *mappedTaskError
	if errors.As(err, &mapped) {
		to := runPath(key.DagID, key.RunID) + "?" + url.Values{"task_id": {key.TaskID}}.Encode() + "#tis"
		http.Redirect(w, r, to, http.StatusSeeOther) //nolint:gosec // a path on this site, escaped
		return
	}
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	head, err := u.readHead(r, key, ti, r.URL)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	d := tiData{TI: *ti, Head: head, Try: head.Try, Back: r.URL.RequestURI(), Base: tiURL(key)}
	if d.HeadHTML, err = u.headHTML(req, head); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	if err := u.readLog(r.Context(), &d, ti, key); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	mi := key.MapIndex
	xp := &store.XComListParams{DagID: key.DagID, RunID: key.RunID, TaskID: key.TaskID, MapIndex: &mi, Page: store.Page{Limit: xcomPageSize}}
	xcoms, total, err := store.List(ctx, xp, u.st.XComList, u.st.XComCount)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	for _, x := range xcoms {
		d.XComs = append(d.XComs, xcomRow{XCom: x, Pretty: prettyJSON(x.Value)})
	}
	d.XComMore = total - len(xcoms)
	if d.State, err = u.loadStatePanel(r, core.TaskScope(key.DagID, key.RunID, key.TaskID, key.MapIndex),
		"Task state", tiPath(key)+"/state", mapQuery(key)); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	u.render(w, r, http.StatusOK, "ti", req, key.TaskID, d)
}

// readLog reads the start of the shown try's log and, while that try may
// still write, where to tail it from.
func (u *UI) readLog(ctx context.Context, d *tiData, ti *core.TaskInstance, key core.TIKey) error {
	lk := tasklog.KeyOf(ti)
	lk.TryNumber = d.Try
	head, err := u.logHead(ctx, lk)
	if err != nil {
		return err
	}
	d.Log, d.LogSkipped = head.Text, head.Skipped
	d.Download = tiPath(key) + "/log?" + tryQuery(key, d.Try)
	if d.Try == ti.TryNumber && !ti.State.Terminal() && head.tailable() {
		q := url.Values{"token": {strconv.FormatInt(head.Next, 10)}}
		if key.MapIndex >= 0 {
			q.Set("map_index", strconv.Itoa(key.MapIndex))
		}
		d.TailURL = fmt.Sprintf("/api/v2/dags/%s/dagRuns/%s/taskInstances/%s/logs/%d?%s",
			pathEscape(key.DagID), pathEscape(key.RunID), pathEscape(key.TaskID), d.Try, q.Encode())
	}
	return nil
}

// loadTI reads the task instance of the path and ?map_index=.
func (u *UI) loadTI(r *http.Request) (core.TIKey, *core.TaskInstance, error) {
	key, err := tiKey(r)
	if err != nil {
		return key, nil, err
	}
	ti, err := u.st.TaskInstanceGetByKey(r.Context(), key.DagID, key.RunID, key.TaskID, key.MapIndex)
	if errors.Is(err, core.ErrNotFound) && key.MapIndex == core.NoMapIndex {
		// A mapped task's page without ?map_index= (a typed or old URL):
		// say how many instances it has rather than only "not found".
		n, cerr := u.st.TaskInstanceCount(r.Context(), &store.TaskInstanceListParams{DagID: key.DagID, RunID: key.RunID, TaskID: key.TaskID})
		if cerr == nil && n > 0 {
			return key, nil, &mappedTaskError{key: key, n: n}
		}
	}
	if err != nil {
		return key, nil, fmt.Errorf("task instance %s: %w", key, err)
	}
	return key, ti, nil
}

// mappedTaskError is a mapped task's page asked for without ?map_index=:
// the task page shows its instances (the run page, filtered to them);
// other pages say how to name one.
type mappedTaskError struct {
	key core.TIKey
	n   int
}

func (e *mappedTaskError) Error() string {
	return fmt.Sprintf("task %s of run %s is mapped: open one of its %d instances with ?map_index=0 to %d", e.key.TaskID, e.key.RunID, e.n, e.n-1)
}

func (e *mappedTaskError) Unwrap() error { return core.ErrNotFound }

// tiKey reads the task instance of the path and ?map_index= (default -1).
func tiKey(r *http.Request) (core.TIKey, error) {
	k := core.TIKey{DagID: r.PathValue("dag_id"), RunID: r.PathValue("run_id"), TaskID: r.PathValue("task_id"), MapIndex: core.NoMapIndex}
	if s := r.URL.Query().Get("map_index"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < -1 {
			return k, fmt.Errorf("%w: %w", &badParam{name: "map_index", value: s, want: "-1 (not mapped) or a map index"}, core.ErrInvalid)
		}
		k.MapIndex = n
	}
	return k, nil
}

// tiURL is a task instance's page.
func tiURL(k core.TIKey) string { return tiPath(k) + mapQuery(k) }

// tiPath is a task instance's page without its map index.
func tiPath(k core.TIKey) string {
	return "/dags/" + pathEscape(k.DagID) + "/runs/" + pathEscape(k.RunID) + "/tasks/" + pathEscape(k.TaskID)
}

// mapQuery is "?map_index=N" for a mapped instance, else "".
// tryQuery is the query naming try of k's instance: ?try=N&map_index=M.
func tryQuery(k core.TIKey, try int) string {
	q := url.Values{"try": {strconv.Itoa(try)}}
	if k.MapIndex >= 0 {
		q.Set("map_index", strconv.Itoa(k.MapIndex))
	}
	return q.Encode()
}

func mapQuery(k core.TIKey) string {
	if k.MapIndex < 0 {
		return ""
	}
	return "?map_index=" + strconv.Itoa(k.MapIndex)
}

// taskScope is the task state a task-instance page's state forms edit.
func taskScope(r *http.Request) (core.StateScope, error) {
	k, err := tiKey(r)
	return core.TaskScope(k.DagID, k.RunID, k.TaskID, k.MapIndex), err
}
