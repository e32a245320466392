package ui

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"strconv"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// Grid sizes: how many runs the grid shows by default and at most.
const (
	gridRunsDefault = 25
	gridRunsMax     = 100
)

// dagData is the DAG page's model.
type dagData struct {
	Dag  core.DagModel
	Spec core.DAG
	Grid grid
	// GridHTML is the grid's table (gridHTML), the part live updates swap.
	GridHTML template.HTML
	// LiveURL is the grid fragment the script polls; ETag its version.
	LiveURL, ETag string
	RunCount      int
	Back          string
	// RunIDs are the grid's runs newest first: the action form's choices.
	RunIDs []string

	runs   []core.DagRun                  // the grid's runs, oldest first
	counts []store.TaskInstanceStateCount // their state counts
}

// dagPage shows a DAG: its header (schedule, next run, pause, trigger)
// and its grid of the newest runs.
func (u *UI) dagPage(w http.ResponseWriter, r *http.Request, req *request) {
	d, err := u.dagData(r)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	frag := gridHTML(d.Grid)
	d.GridHTML = template.HTML(frag) //nolint:gosec // gridHTML escapes every value it writes
	d.ETag = etagOf([]byte(frag))
	u.render(w, r, http.StatusOK, "dag", req, d.Dag.DagID, d)
}

// gridFragment answers the grid's live updates: the grid's HTML with an
// ETag, or 304 when it has not changed since the version the page holds.
func (u *UI) gridFragment(w http.ResponseWriter, r *http.Request, req *request) {
	d, err := u.dagData(r)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	writeFragment(w, r, []byte(gridHTML(d.Grid)))
}

// writeFragment answers a live update of a page part: the part's HTML
// with its ETag, or 304 Not Modified when the browser holds that version
// (If-None-Match).
func writeFragment(w http.ResponseWriter, r *http.Request, frag []byte) {
	tag := etagOf(frag)
	w.Header().Set("ETag", tag)
	w.Header().Set("Cache-Control", "no-cache")
	if r.Header.Get("If-None-Match") == tag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(frag) //nolint:gosec // fragments are rendered by html/template or gridHTML, which escape every value
}

// dagData reads what the DAG page shows: the DAG, its latest version's
// tasks, its newest runs (?runs=N, oldest first) and their state counts.
func (u *UI) dagData(r *http.Request) (*dagData, error) {
	ctx := r.Context()
	n, err := runsParam(r)
	if err != nil {
		return nil, err
	}
	dagID := r.PathValue("dag_id")
	dag, err := u.st.DagGet(ctx, dagID)
	if err != nil {
		return nil, fmt.Errorf("dag_id %q: %w", dagID, err)
	}
	v, err := u.st.DagVersionLatest(ctx, dagID)
	if err != nil {
		return nil, fmt.Errorf("latest version of dag_id %q: %w", dagID, err)
	}
	p := &store.DagRunListParams{DagID: dagID, Page: store.Page{Limit: n}}
	newest, total, err := store.List(ctx, p, u.st.DagRunList, u.st.DagRunCount)
	if err != nil {
		return nil, err
	}
	runs := make([]core.DagRun, len(newest))
	ids := make([]int64, len(newest))
	for i, run := range newest { // newest first → oldest left
		runs[len(newest)-1-i], ids[i] = run, run.ID
	}
	counts, err := u.st.TaskInstanceStateCounts(ctx, ids)
	if err != nil {
		return nil, err
	}
	live := "/dags/" + pathEscape(dagID) + "/grid"
	if n != gridRunsDefault {
		live += "?runs=" + strconv.Itoa(n)
	}
	runIDs := make([]string, len(newest))
	for i, run := range newest {
		runIDs[i] = run.RunID
	}
	return &dagData{Dag: *dag, Spec: v.Spec, Grid: buildGrid(dagID, v.Spec.Tasks, runs, counts, u.clk.Now()),
		LiveURL: live, RunCount: total, Back: r.URL.RequestURI(), RunIDs: runIDs, runs: runs, counts: counts}, nil
}

// runsParam reads ?runs= (how many runs the grid shows).
func runsParam(r *http.Request) (int, error) {
	s := r.URL.Query().Get("runs")
	if s == "" {
		return gridRunsDefault, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > gridRunsMax {
		return 0, fmt.Errorf("%w: %w", &badParam{name: "runs", value: s, want: "a whole number from 1 to " + strconv.Itoa(gridRunsMax)}, core.ErrInvalid)
	}
	return n, nil
}

// etagOf is a strong ETag of a rendered fragment.
func etagOf(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`
}

// durationsData is the durations view's model.
type durationsData struct {
	*dagData
	Charts []durationChart
}

// durationsPage charts each task's duration over the DAG's newest runs
// (?runs=N as the grid), from the grid's one grouped read.
func (u *UI) durationsPage(w http.ResponseWriter, r *http.Request, req *request) {
	d, err := u.dagData(r)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	u.render(w, r, http.StatusOK, "durations", req, d.Dag.DagID+" durations",
		durationsData{dagData: d, Charts: buildDurations(d.Spec.Tasks, d.runs, d.counts, u.clk.Now())})
}
