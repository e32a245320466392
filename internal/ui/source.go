package ui

import (
	"errors"
	"net/http"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagsource"
)

// sourceData is the source view's model.
type sourceData struct {
	Dag       core.DagModel
	FileLoc   string
	Source    string // the file's text; "" when Missing says why
	Truncated bool
	Missing   string // why the file is not shown
	Spec      string // the parsed DAG, as JSON
	Back      string
}

// sourcePage shows the file a DAG was loaded from, read from the DAGs
// folder (only a file inside it), and the DAG as Weir parsed it.
func (u *UI) sourcePage(w http.ResponseWriter, r *http.Request, req *request) {
	dag, spec, err := u.dagSpec(r)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	d := sourceData{Dag: *dag, FileLoc: spec.FileLoc, Spec: prettyAny(spec), Back: r.URL.RequestURI()}
	switch src, truncated, err := dagsource.Read(u.cfg.DagsFolder, spec.FileLoc); {
	case err == nil:
		d.Source, d.Truncated = src, truncated
	case errors.Is(err, dagsource.ErrNoSource):
		d.Missing = err.Error()
	default:
		u.log.WarnContext(r.Context(), "ui: read dag source", "dag_id", dag.DagID, "err", err)
		d.Missing = "The file could not be read; the api-server log says why."
	}
	u.render(w, r, http.StatusOK, "source", req, dag.DagID+" source", d)
}
