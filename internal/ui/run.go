package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// runPageSize is how many task instances one page of a run shows.
const runPageSize = 100

// runCallbacksShown is how many of a run's callbacks its page lists, oldest
// first (the REST API's dagRuns/{run_id}/callbacks pages through all).
const runCallbacksShown = 50

// runEventsShown is how many of the asset events that triggered a run its
// page lists (the REST API's dagRuns/{run_id}/upstreamAssetEvents pages
// through all).
const runEventsShown = 25

// runData is the run page's model.
type runData struct {
	Run      core.DagRun
	Conf     string // pretty-printed
	Duration string
	TIs      []tiRow
	Gantt    gantt
	Pager    pager
	Back     string
	// TaskFilter and StateFilter keep the instance table to one task (a
	// mapped task's instances) and one state; "" and "all" are none.
	TaskFilter  string
	StateFilter []option
	// Events are the asset events the run consumed (the first
	// runEventsShown of EventsTotal; EventsMore beyond them).
	Events                  []eventRow
	EventsTotal, EventsMore int
	// Callbacks are the run's fired callbacks (its own and its tasks'),
	// the first runCallbacksShown of CallbacksTotal.
	Callbacks      []callbackRow
	CallbacksTotal int
	// BodyHTML is the page's live part ("runbody"), which the script
	// refreshes from LiveURL; ETag is its version.
	BodyHTML      template.HTML
	LiveURL, ETag string
}

// tiRow is one task instance of the run page.
type tiRow struct {
	core.TaskInstance
	Duration string
	Link     string // the try's log on the task-instance page ("" on the run page)
}

// callbackRow is one callback of the run page, with the link to its page
// (its latest attempt's log beside the try's or the run's).
type callbackRow struct {
	core.Callback
	LogURL string // "" before its first attempt
}

// runPage shows a run: its dates, partition and conf, its task instances
// (paged in the database), the asset events that triggered it and, for an
// op, the clear and mark forms. With
// JavaScript its live part is refreshed from runFragment.
func (u *UI) runPage(w http.ResponseWriter, r *http.Request, req *request) {
	d, body, err := u.runBody(r, req, r.URL)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	d.BodyHTML = template.HTML(body) //nolint:gosec // rendered by html/template
	d.ETag = etagOf(body)
	p := &store.AssetEventListParams{ConsumedByRunID: d.Run.ID, Page: store.Page{Limit: runEventsShown}}
	events, total, err := store.List(r.Context(), p, u.st.AssetEventList, u.st.AssetEventCount)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	for _, e := range events {
		d.Events = append(d.Events, eventRow{AssetEvent: e, Extra: prettyJSON(e.Extra)})
	}
	d.EventsTotal, d.EventsMore = total, total-len(events)
	u.render(w, r, http.StatusOK, "run", req, d.Run.RunID, d)
}

// tiStateNames are the states an instance filter may name ("none" for the
// empty state).
func tiStateNames() []string {
	out := make([]string, 0, len(core.AllTIStates))
	for _, s := range core.AllTIStates {
		if s != core.TINone {
			out = append(out, string(s))
		}
	}
	return out
}

// runFragment answers the run page's live updates as gridFragment does:
// the live part's HTML with an ETag, or 304 while it is unchanged.
func (u *UI) runFragment(w http.ResponseWriter, r *http.Request, req *request) {
	page := *r.URL
	page.Path = strings.TrimSuffix(page.Path, "/live")
	_, body, err := u.runBody(r, req, &page)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	writeFragment(w, r, body)
}

// runBody reads the run (?offset= pages its task instances) and renders
// the page's live part for page, the run page's URL.
func (u *UI) runBody(r *http.Request, req *request, page *url.URL) (*runData, []byte, error) {
	ctx := r.Context()
	dagID, runID := r.PathValue("dag_id"), r.PathValue("run_id")
	run, err := u.st.DagRunGet(ctx, dagID, runID)
	if err != nil {
		return nil, nil, fmt.Errorf("run %q of dag_id %q: %w", runID, dagID, err)
	}
	q := page.Query()
	state, err := choiceParam(q, "state", tiStateNames())
	if err != nil {
		return nil, nil, err
	}
	p := &store.TaskInstanceListParams{DagRunID: run.ID, TaskID: q.Get("task_id")}
	if state != "all" {
		p.States = []core.TIState{core.TIState(state)}
	}
	tis, total, offset, err := readPage(r, p, &p.Page, runPageSize, u.st.TaskInstanceList, u.st.TaskInstanceCount)
	if err != nil {
		return nil, nil, err
	}
	now := u.clk.Now()
	d := &runData{Run: *run, Duration: span(run.StartDate, run.EndDate, now), Back: page.RequestURI(),
		Pager: newPager(page, "offset", offset, runPageSize, len(tis), total), TaskFilter: p.TaskID,
		StateFilter: statusOptions(state, tiStateNames()...)}
	for _, ti := range tis {
		d.TIs = append(d.TIs, tiRow{TaskInstance: ti, Duration: span(ti.StartDate, ti.EndDate, now)})
	}
	d.Conf = prettyJSON(run.Conf)
	d.Gantt = buildGantt(tis, now)
	cp := &store.CallbackListParams{DagRunID: run.ID, Page: store.Page{Limit: runCallbacksShown}}
	cbs, cbTotal, err := store.List(ctx, cp, u.st.CallbackList, u.st.CallbackCount)
	if err != nil {
		return nil, nil, err
	}
	for _, cb := range cbs {
		row := callbackRow{Callback: cb}
		if cb.Attempts > 0 {
			row.LogURL = fmt.Sprintf("%s/callbacks/%d", runPath(run.DagID, run.RunID), cb.ID)
		}
		d.Callbacks = append(d.Callbacks, row)
	}
	d.CallbacksTotal = cbTotal
	live := *page
	live.Path += "/live"
	d.LiveURL = live.RequestURI()
	body, err := u.renderPart("run", "runbody", req, d)
	return d, body, err
}

// clearRun clears the run's task instances (all, only the failed ones, or
// one task's) through the service, keeping their task state when asked.
func (u *UI) clearRun(w http.ResponseWriter, r *http.Request, req *request) {
	p := clearParams(r, r.PathValue("dag_id"), r.PathValue("run_id"))
	if u.confirmedClear(w, r, req, p) {
		back(w, r, runPath(p.DagID, p.RunID))
	}
}

// markTI sets a task instance (map_index) to success, failed or skipped,
// an operator's override, once confirmed (confirmedMark: the page lists
// what changes, with Airflow's options: upstream, downstream, past,
// future).
func (u *UI) markTI(w http.ResponseWriter, r *http.Request, req *request) {
	dagID, runID := r.PathValue("dag_id"), r.PathValue("run_id")
	if u.confirmedMark(w, r, req, dagID, runID, r.PathValue("task_id")) {
		back(w, r, runPath(dagID, runID))
	}
}

// prettyJSON indents a JSON document for reading; "" for none.
func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return unescapeHTML(buf.Bytes())
}

// prettyAny indents a value as JSON.
func prettyAny(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return unescapeHTML(b)
}

// unescapeHTML writes JSON text's \u003c, \u003e and \u0026 (how Go's
// encoder stores <, > and &) as the characters, as they were typed: the
// page's template escapes what it shows. Other escapes stay as they are.
func unescapeHTML(js []byte) string {
	var b strings.Builder
	b.Grow(len(js))
	for i := 0; i < len(js); i++ {
		if js[i] != '\\' || i+1 >= len(js) {
			b.WriteByte(js[i])
			continue
		}
		if js[i+1] == 'u' && i+6 <= len(js) {
			if c := htmlEscaped(string(js[i+2 : i+6])); c != 0 {
				b.WriteByte(c)
				i += 5
				continue
			}
		}
		b.WriteString(string(js[i : i+2])) // an escape pair, \\ included
		i++
	}
	return b.String()
}

// htmlEscaped is the character Go's JSON encoder escapes as \u<hex>, or 0.
func htmlEscaped(hex string) byte {
	switch strings.ToLower(hex) {
	case "003c":
		return '<'
	case "003e":
		return '>'
	case "0026":
		return '&'
	}
	return 0
}
