package ui

import (
	"fmt"
	"net/http"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/statevalue"
	"github.com/weirflow/weir/internal/store"
)

// statePageSize is how many state entries one panel page shows.
const statePageSize = 50

// statePanel is the state of one scope (a task instance's task state or an
// asset's state) as the "statepanel" partial shows it. Both kinds share
// the panel, its forms and their handlers.
type statePanel struct {
	Title   string
	Action  string // the forms' base path: <Action>/set, /delete, /clear
	Query   string // appended to each form's URL ("?map_index=2" or "")
	Kind    core.StateKind
	Entries []stateRow
	Pager   pager
	Back    string
}

// stateRow is one entry of the panel.
type stateRow struct {
	core.StateEntry
	Pretty  string // the value, indented
	Writer  string // who wrote it last: "try 2 of run r1" or "user ana"
	Expires string // a time, "never", or "" (asset state has no retention)
}

// loadStatePanel reads one page (?state_offset=) of a scope's state.
func (u *UI) loadStatePanel(r *http.Request, scope core.StateScope, title, action, query string) (*statePanel, error) {
	offset, err := offsetParam(r.URL.Query(), "state_offset")
	if err != nil {
		return nil, err
	}
	rows, total, err := u.states.List(r.Context(), store.ListScope(scope, store.Page{Limit: statePageSize, Offset: offset}))
	if err != nil {
		return nil, err
	}
	p := &statePanel{Title: title, Action: action, Query: query, Kind: scope.Kind, Back: r.URL.RequestURI(),
		Pager: newPager(r.URL, "state_offset", offset, statePageSize, len(rows), total)}
	for _, e := range rows {
		row := stateRow{StateEntry: e, Pretty: prettyJSON(e.Value), Writer: writerOf(e.UpdatedBy)}
		switch {
		case e.NeverExpire:
			row.Expires = "never"
		case e.ExpiresAt != nil:
			row.Expires = fmtTime(e.ExpiresAt)
		}
		p.Entries = append(p.Entries, row)
	}
	return p, nil
}

// writerOf says who last wrote an entry.
func writerOf(w core.StateWriter) string {
	switch w.Kind {
	case core.StateWriterTask:
		s := fmt.Sprintf("try %d of %s.%s in run %s", w.TryNumber, w.DagID, w.TaskID, w.RunID)
		if w.MapIndex >= 0 {
			s += fmt.Sprintf(" [%d]", w.MapIndex)
		}
		return s
	case core.StateWriterUser:
		if w.User == "" { // task state keeps no name; the audit log has it
			return "a user (see the audit log)"
		}
		return "user " + w.User
	}
	return w.Kind
}

// scopeFunc names the scope a state form edits, from its request.
type scopeFunc func(r *http.Request) (core.StateScope, error)

// stateSet writes one key (form fields key, value as JSON and, for task
// state, retention) through the state service's audited admin edit.
func (u *UI) stateSet(scope scopeFunc) handler {
	return func(w http.ResponseWriter, r *http.Request, req *request) {
		sc, err := scope(r)
		if err == nil {
			var ret statevalue.Retention
			if ret, err = statevalue.ParseRetention(r.PostFormValue("retention")); err == nil {
				_, err = u.states.AdminSet(r.Context(), actor(req), sc, r.PostFormValue("key"), []byte(r.PostFormValue("value")), ret)
			}
		}
		u.afterEdit(w, r, req, err)
	}
}

// stateDelete deletes one key (form field key), audited.
func (u *UI) stateDelete(scope scopeFunc) handler {
	return func(w http.ResponseWriter, r *http.Request, req *request) {
		sc, err := scope(r)
		if err == nil {
			err = u.states.AdminDelete(r.Context(), actor(req), sc, r.PostFormValue("key"))
		}
		u.afterEdit(w, r, req, err)
	}
}

// stateClear deletes every key of the scope, audited.
func (u *UI) stateClear(scope scopeFunc) handler {
	return func(w http.ResponseWriter, r *http.Request, req *request) {
		sc, err := scope(r)
		if err == nil {
			err = u.states.AdminClear(r.Context(), actor(req), sc, false)
		}
		u.afterEdit(w, r, req, err)
	}
}

// afterEdit returns to the form's page, or shows the edit's error.
func (u *UI) afterEdit(w http.ResponseWriter, r *http.Request, req *request, err error) {
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	back(w, r, "/dags")
}

// stateEditRole is the least role that sees the panel's edit controls.
var stateEditRole = string(statestore.EditRole)
