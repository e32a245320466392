package ui

import (
	"maps"
	"net/http"
	"slices"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
)

// confirmData is the page that lists what a clear will reset before it
// does, as Airflow's clear dialog does: the form's fields again, hidden,
// with confirm=yes.
type confirmData struct {
	DagID  string
	Action string // the form's URL
	Fields []formField
	TIs    []core.TaskInstance
	Back   string
}

type formField struct{ Name, Value string }

// confirmedClear runs the clear p the posted form asks for once confirmed
// (confirm=yes); before, it shows what the clear would reset (a dry run)
// and asks. It reports whether the clear ran.
func (u *UI) confirmedClear(w http.ResponseWriter, r *http.Request, req *request, p service.ClearParams) bool {
	if r.PostFormValue("confirm") == "yes" {
		if _, err := u.svc.Clear(r.Context(), actor(req), p); err != nil {
			u.failErr(w, r, req, err)
			return false
		}
		return true
	}
	p.DryRun = true
	tis, err := u.svc.Clear(r.Context(), actor(req), p)
	if err != nil {
		u.failErr(w, r, req, err)
		return false
	}
	d := confirmData{DagID: p.DagID, Action: r.URL.EscapedPath(), TIs: tis, Back: localPath(r.PostFormValue("back"))}
	for _, name := range slices.Sorted(maps.Keys(r.PostForm)) {
		if name == "csrf" || name == "confirm" {
			continue
		}
		for _, v := range r.PostForm[name] {
			d.Fields = append(d.Fields, formField{Name: name, Value: v})
		}
	}
	u.render(w, r, http.StatusOK, "confirm", req, "Clear "+p.DagID+"?", d)
	return false
}
