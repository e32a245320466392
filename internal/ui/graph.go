package ui

import (
	"fmt"
	"net/http"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// graphRunChoices is how many recent runs the graph's run selector offers.
const graphRunChoices = 25

// graphData is the graph view's model.
type graphData struct {
	Dag    core.DagModel
	Layout graphLayout
	States map[string]gridCell // task → its state in the selected run
	Run    *core.DagRun        // the selected run; nil when the DAG has none
	Runs   []core.DagRun       // the runs to choose from, newest first
	Back   string
}

// graphPage shows the DAG's tasks as a layered graph (SVG drawn on the
// server), coloured by their state in the selected run (?run=, default the
// newest).
func (u *UI) graphPage(w http.ResponseWriter, r *http.Request, req *request) {
	ctx := r.Context()
	dag, spec, err := u.dagSpec(r)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	runs, err := u.st.DagRunList(ctx, &store.DagRunListParams{DagID: dag.DagID, Page: store.Page{Limit: graphRunChoices}})
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	d := graphData{Dag: *dag, Runs: runs, Back: r.URL.RequestURI(), States: map[string]gridCell{}}
	if id := r.URL.Query().Get("run"); id != "" {
		if d.Run, err = u.st.DagRunGet(ctx, dag.DagID, id); err != nil {
			u.failErr(w, r, req, fmt.Errorf("run %q of dag_id %q: %w", id, dag.DagID, err))
			return
		}
	} else if len(runs) > 0 {
		d.Run = &runs[0]
	}
	ids := make([]string, len(spec.Tasks))
	up := map[string][]string{}
	for i, t := range spec.Tasks {
		ids[i], up[t.TaskID] = t.TaskID, t.DependsOn
	}
	d.Layout = layoutGraph(ids, up)
	if d.Run != nil {
		counts, err := u.st.TaskInstanceStateCounts(ctx, []int64{d.Run.ID})
		if err != nil {
			u.failErr(w, r, req, err)
			return
		}
		for _, row := range buildGrid(dag.DagID, spec.Tasks, []core.DagRun{*d.Run}, counts, u.clk.Now()).Rows {
			d.States[row.TaskID] = row.Cells[0]
		}
	}
	u.render(w, r, http.StatusOK, "graph", req, dag.DagID+" graph", d)
}
