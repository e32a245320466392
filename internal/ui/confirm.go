package ui

import (
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
)

// confirmData is the page that lists the task instances a clear or a mark
// will change before it does, as Airflow's dialogs do: the form's fields
// again, hidden, with confirm=yes; its options as checkboxes that list
// again.
type confirmData struct {
	DagID   string
	Verb    string // "Clear", "Mark": the heading's and the button's
	Suffix  string // after the count: " as success"
	Note    string // what the change does to each instance
	Action  string // the form's URL
	Fields  []formField
	Options []confirmOption
	TIs     []core.TaskInstance
	Back    string
}

type formField struct{ Name, Value string }

// confirmOption is a checkbox of the confirmation page: a form field set to
// "true" when ticked.
type confirmOption struct {
	Name, Label string
	Checked     bool
}

// confirmed carries out a clear or a mark the posted form asks for once
// confirmed (confirm=yes): change runs it (dry false) or lists what it
// would change (dry true); before, it shows that list and asks. It reports
// whether the change ran.
func (u *UI) confirmed(w http.ResponseWriter, r *http.Request, req *request, d confirmData,
	change func(dry bool) ([]core.TaskInstance, error)) bool {
	if r.PostFormValue("confirm") == "yes" {
		if _, err := change(false); err != nil {
			u.failErr(w, r, req, err)
			return false
		}
		return true
	}
	tis, err := change(true)
	if err != nil {
		u.failErr(w, r, req, err)
		return false
	}
	d.Action, d.TIs, d.Back = r.URL.EscapedPath(), tis, localPath(r.PostFormValue("back"))
	for i := range d.Options {
		d.Options[i].Checked = r.PostFormValue(d.Options[i].Name) == "true"
	}
	for _, name := range slices.Sorted(maps.Keys(r.PostForm)) {
		if name == "csrf" || name == "confirm" || name == "listed" || slices.ContainsFunc(d.Options, func(o confirmOption) bool { return o.Name == name }) {
			continue
		}
		for _, v := range r.PostForm[name] {
			d.Fields = append(d.Fields, formField{Name: name, Value: v})
		}
	}
	u.render(w, r, http.StatusOK, "confirm", req, d.Verb+d.Suffix+" in "+d.DagID+"?", d)
	return false
}

// confirmedClear runs the clear p the posted form asks for once confirmed,
// after a page listing what it resets (confirmed).
func (u *UI) confirmedClear(w http.ResponseWriter, r *http.Request, req *request, p service.ClearParams) bool {
	d := confirmData{DagID: p.DagID, Verb: "Clear",
		Note: "Each gets a new try and runs again; its XCom goes, and its task state unless kept."}
	return u.confirmed(w, r, req, d, func(dry bool) ([]core.TaskInstance, error) {
		p.DryRun = dry
		return u.svc.Clear(r.Context(), actor(req), p)
	})
}

// markOptions are a mark's options, as Airflow's "Mark as" dialog offers
// them.
func markOptions() []confirmOption {
	return []confirmOption{{Name: "upstream", Label: "upstream tasks"}, {Name: "downstream", Label: "downstream tasks"},
		{Name: "past", Label: "earlier runs"}, {Name: "future", Label: "later runs"}}
}

// confirmedMark runs the mark of taskID's instances in a run (the form's
// map_index: one of them, else each) to the form's state once confirmed,
// after a page listing what it changes with the mark's options
// (markOptions).
func (u *UI) confirmedMark(w http.ResponseWriter, r *http.Request, req *request, dagID, runID, taskID string) bool {
	p := service.MarkParams{DagID: dagID, RunID: runID, TaskID: taskID, State: core.TIState(r.PostFormValue("state")),
		Upstream: r.PostFormValue("upstream") == "true", Downstream: r.PostFormValue("downstream") == "true",
		Past: r.PostFormValue("past") == "true", Future: r.PostFormValue("future") == "true"}
	if s := r.PostFormValue("map_index"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			u.fail(w, r, req, http.StatusBadRequest, "map_index must be a whole number, not "+strconv.Quote(s)+"; nothing was changed.")
			return false
		}
		p.MapIndex = &n
	}
	d := confirmData{DagID: dagID, Verb: "Mark", Suffix: " as " + string(p.State), Options: markOptions(),
		Note: "Each is set to " + string(p.State) + " whatever its state (a running try is stopped by its worker); " +
			"its run, if it had ended, runs again to follow. Those already " + string(p.State) + " are left as they are."}
	return u.confirmed(w, r, req, d, func(dry bool) ([]core.TaskInstance, error) {
		p.DryRun = dry
		return u.svc.Mark(r.Context(), actor(req), p)
	})
}
