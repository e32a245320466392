package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
)

// paramField is one field of the trigger form, generated from a DAG param.
type paramField struct {
	Name, Description string
	Kind              string // "string", "number", "bool" or "json" (lists, mappings, null)
	Value             string // as the field shows it
	Checked           bool   // for "bool"
}

// triggerData is the trigger form's model.
type triggerData struct {
	Dag    core.DagModel
	Fields []paramField
	RunID  string
	// LogicalDate and Conf are the form's optional logical date and
	// configuration JSON (keys over the params' fields), as typed.
	LogicalDate, Conf string
	Errors            []string // one line each: what the form's values got wrong
	// Unpause is the "unpause on trigger" checkbox a paused DAG's form
	// shows (checked at first, as Airflow's trigger dialog offers).
	Unpause bool
}

// paramFields builds the trigger form's fields from a DAG's params (by
// name), each typed by its default; values, when given, are what the user
// entered (the form shown again after an error).
func paramFields(spec *core.DAG, values url.Values) []paramField {
	names := make([]string, 0, len(spec.Params))
	for n := range spec.Params {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]paramField, 0, len(names))
	for _, n := range names {
		f := paramField{Name: n, Description: spec.ParamDescriptions[n]}
		switch v := spec.Params[n].(type) {
		case string:
			f.Kind, f.Value = "string", v
		case bool:
			f.Kind, f.Checked = "bool", v
		case float64, int, int64, uint64:
			f.Kind, f.Value = "number", fmt.Sprint(v)
		default:
			b, _ := json.Marshal(v) // decoded from YAML or JSON: always encodes
			f.Kind, f.Value = "json", string(b)
		}
		if values != nil {
			f.Value = values.Get("param." + n)
			f.Checked = values.Get("param."+n) == "true"
		}
		out = append(out, f)
	}
	return out
}

// confFromForm turns the trigger form's fields into the run's conf: each
// param's field ("param.<name>") parsed as its default's type, then the
// keys of the configuration JSON ("conf", a JSON object; optional) over
// them, as Airflow's trigger form's JSON. A value that does not parse is
// an error naming the param.
func confFromForm(spec *core.DAG, form url.Values) (json.RawMessage, error) {
	conf := map[string]any{}
	var errs []error
	var extra map[string]any
	if raw := strings.TrimSpace(form.Get("conf")); raw != "" {
		if err := json.Unmarshal([]byte(raw), &extra); err != nil || extra == nil {
			errs = append(errs, fmt.Errorf("the configuration JSON must be a JSON object such as {\"key\": 1}, not %q", raw))
		}
	}
	for _, f := range paramFields(spec, nil) {
		raw := form.Get("param." + f.Name)
		switch f.Kind {
		case "string":
			conf[f.Name] = raw
		case "bool":
			conf[f.Name] = raw == "true"
		case "number":
			n, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("param %q must be a number, not %q", f.Name, raw))
				continue
			}
			conf[f.Name] = n
		case "json":
			var v any
			if err := json.Unmarshal([]byte(raw), &v); err != nil {
				errs = append(errs, fmt.Errorf("param %q must be JSON (a list, a mapping or null): %w", f.Name, err))
				continue
			}
			conf[f.Name] = v
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", errors.Join(errs...), core.ErrInvalid)
	}
	maps.Copy(conf, extra) // over the params' fields
	return json.Marshal(conf)
}

// triggerPage shows the trigger form of a DAG.
func (u *UI) triggerPage(w http.ResponseWriter, r *http.Request, req *request) {
	dag, spec, err := u.dagSpec(r)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	u.render(w, r, http.StatusOK, "trigger", req, "Trigger "+dag.DagID,
		triggerData{Dag: *dag, Fields: paramFields(spec, nil), Unpause: true})
}

// trigger starts a run with the form's conf through the service and shows
// the run, then unpauses a paused DAG when the form's "unpause on trigger"
// is checked (else the run stays queued until the DAG is unpaused); a bad
// value shows the form again with the error, and nothing is created or
// unpaused.
func (u *UI) trigger(w http.ResponseWriter, r *http.Request, req *request) {
	dag, spec, err := u.dagSpec(r)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	d := triggerData{Dag: *dag, Fields: paramFields(spec, r.PostForm), RunID: r.PostFormValue("run_id"),
		LogicalDate: r.PostFormValue("logical_date"), Conf: r.PostFormValue("conf"), Unpause: r.PostFormValue("unpause") == "true"}
	conf, confErr := confFromForm(spec, r.PostForm)
	logical, dateErr := dateParam("logical date", strings.TrimSpace(d.LogicalDate), false)
	var idErr error
	if d.RunID != "" {
		idErr = u.svc.CheckRunID(d.RunID)
	}
	err = errors.Join(confErr, dateErr, idErr) // every problem of the form at once
	if err == nil {
		var run *core.DagRun
		run, err = u.svc.TriggerRun(r.Context(), actor(req), runs.TriggerParams{DagID: dag.DagID, RunID: d.RunID, Conf: conf, LogicalDate: logical})
		if err == nil && dag.IsPaused && d.Unpause {
			if _, err := u.svc.SetDagPaused(r.Context(), actor(req), dag.DagID, false); err != nil {
				u.failErr(w, r, req, fmt.Errorf("unpause %s after triggering run %s: %w", dag.DagID, run.RunID, err))
				return
			}
		}
		if err == nil {
			http.Redirect(w, r, "/dags/"+pathEscape(dag.DagID)+"/runs/"+pathEscape(run.RunID), http.StatusSeeOther) //nolint:gosec // a path on this site, escaped
			return
		}
	}
	status := statusOf(err)
	if status == http.StatusInternalServerError {
		u.failErr(w, r, req, err)
		return
	}
	d.Errors = formErrors(err)
	u.render(w, r, status, "trigger", req, "Trigger "+dag.DagID, d)
}

// formErrors is err as the lines a form shows, one problem each, without
// the "invalid input" its kind adds.
func formErrors(err error) []string {
	var out []string
	for line := range strings.SplitSeq(err.Error(), "\n") {
		if line = strings.TrimSuffix(line, ": "+core.ErrInvalid.Error()); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// dagSpec reads the DAG of the path and its latest version's spec.
func (u *UI) dagSpec(r *http.Request) (*core.DagModel, *core.DAG, error) {
	dagID := r.PathValue("dag_id")
	dag, err := u.st.DagGet(r.Context(), dagID)
	if err != nil {
		return nil, nil, fmt.Errorf("dag_id %q: %w", dagID, err)
	}
	v, err := u.st.DagVersionLatest(r.Context(), dagID)
	if err != nil {
		return nil, nil, fmt.Errorf("latest version of dag_id %q: %w", dagID, err)
	}
	return dag, &v.Spec, nil
}
