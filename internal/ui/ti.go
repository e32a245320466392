package ui

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
	"github.com/weirflow/weir/internal/trigger"
)

// xcomPageSize is how many XCom entries the task-instance page shows.
const xcomPageSize = 50

// tiData is the task-instance page's model.
type tiData struct {
	TI       core.TaskInstance
	Tries    []tiRow // every try, the first first
	Try      int     // the try whose log is shown
	Log      string
	LogMore  bool   // the log is longer than what is shown
	TailURL  string // the REST API's log URL to tail from (set while the shown try may still write)
	Trigger  *core.Trigger
	XComs    []xcomRow
	XComMore int // entries beyond the first page
	State    *statePanel
	Base     string // this instance's page URL
	Rendered string // its rendered-templates page
	Back     string
}

// xcomRow is one XCom entry, its value indented.
type xcomRow struct {
	core.XCom
	Pretty string
}

// tiPage shows a task instance (?map_index=, ?try=): its tries, the log of
// one try (live-tailed while it runs), its XCom, the trigger it waits on,
// and its task state panel.
func (u *UI) tiPage(w http.ResponseWriter, r *http.Request, req *request) {
	ctx := r.Context()
	key, ti, err := u.loadTI(r)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	hist, err := u.st.TaskInstanceHistory(ctx, key.DagID, key.RunID, key.TaskID, key.MapIndex)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	now := u.clk.Now()
	d := tiData{TI: *ti, Try: ti.TryNumber, Back: r.URL.RequestURI(), Base: tiURL(key),
		Rendered: tiPath(key) + "/rendered" + mapQuery(key)}
	for _, t := range append(hist, *ti) {
		q := url.Values{"try": {strconv.Itoa(t.TryNumber)}}
		if key.MapIndex >= 0 {
			q.Set("map_index", strconv.Itoa(key.MapIndex))
		}
		d.Tries = append(d.Tries, tiRow{TaskInstance: t, Duration: span(t.StartDate, t.EndDate, now),
			Link: tiPath(key) + "?" + q.Encode() + "#log"})
	}
	if s := r.URL.Query().Get("try"); s != "" {
		if d.Try, err = strconv.Atoi(s); err != nil || d.Try < 1 || d.Try > ti.TryNumber {
			u.fail(w, r, req, http.StatusBadRequest, fmt.Sprintf("try must be a try of this instance, 1 to %d, not %q.", ti.TryNumber, s))
			return
		}
	}
	if err := u.readLog(&d, ti, key); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	if ti.TriggerID != nil && ti.State == core.TIDeferred {
		if d.Trigger, err = u.st.TriggerGet(ctx, *ti.TriggerID); err != nil && !errors.Is(err, core.ErrNotFound) {
			u.failErr(w, r, req, err)
			return
		}
		if d.Trigger != nil {
			d.Trigger.Kwargs = trigger.MaskKwargs(d.Trigger.Kwargs) // as the REST API shows it: secrets masked
		}
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
func (u *UI) readLog(d *tiData, ti *core.TaskInstance, key core.TIKey) error {
	lk := tasklog.KeyOf(ti)
	lk.TryNumber = d.Try
	data, next, err := tasklog.Read(u.cfg.LogFolder, lk, 0)
	if err != nil && !errors.Is(err, core.ErrNotFound) {
		return err
	}
	d.Log = string(data)
	size, err := tasklog.Size(u.cfg.LogFolder, lk)
	if err != nil {
		return err
	}
	d.LogMore = size > next
	if d.Try == ti.TryNumber && !ti.State.Terminal() && !d.LogMore {
		q := url.Values{"token": {strconv.FormatInt(next, 10)}}
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
	if err != nil {
		return key, nil, fmt.Errorf("task instance %s: %w", key, err)
	}
	return key, ti, nil
}

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
