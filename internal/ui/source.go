package ui

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/weirflow/weir/internal/core"
)

// maxSource is how much of a DAG file the source view shows.
const maxSource = 1 << 20

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
	switch src, truncated, err := readSource(u.cfg.DagsFolder, spec.FileLoc); {
	case err == nil:
		d.Source, d.Truncated = src, truncated
	case errors.Is(err, errNoSource):
		d.Missing = err.Error()
	default:
		u.log.WarnContext(r.Context(), "ui: read dag source", "dag_id", dag.DagID, "err", err)
		d.Missing = "The file could not be read; the api-server log says why."
	}
	u.render(w, r, http.StatusOK, "source", req, dag.DagID+" source", d)
}

// errNoSource is why a DAG's source cannot be shown (a Go DAG, no DAGs
// folder, a file outside it); its message is for the user.
var errNoSource = errors.New("no source")

// readSource reads up to maxSource bytes of the DAG file loc, which must
// resolve (symbolic links followed) to a file inside folder: the page never
// reads anything else of the server's disk. truncated says the file is
// longer. Errors wrapping errNoSource say why there is nothing to show.
func readSource(folder, loc string) (src string, truncated bool, err error) {
	switch {
	case strings.HasPrefix(loc, "go:"):
		return "", false, fmt.Errorf("this DAG is defined in Go code compiled into %s (%w)", strings.TrimPrefix(loc, "go:"), errNoSource)
	case loc == "":
		return "", false, fmt.Errorf("the DAG names no file (%w)", errNoSource)
	case folder == "":
		return "", false, fmt.Errorf("this server has no DAGs folder ([core] dags_folder) to read %s from (%w)", loc, errNoSource)
	}
	root, err := filepath.EvalSymlinks(folder)
	if err != nil {
		return "", false, fmt.Errorf("the DAGs folder %s is not readable here (%w)", folder, errNoSource)
	}
	file, err := filepath.EvalSymlinks(loc)
	if err != nil {
		return "", false, fmt.Errorf("%s is not on this server's disk; the DAG processor reads it elsewhere (%w)", loc, errNoSource)
	}
	if root, err = filepath.Abs(root); err != nil {
		return "", false, err
	}
	if file, err = filepath.Abs(file); err != nil {
		return "", false, err
	}
	if rel, err := filepath.Rel(root, file); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false, fmt.Errorf("%s is outside the DAGs folder %s, so it is not shown (%w)", loc, folder, errNoSource)
	}
	f, err := os.Open(file) //nolint:gosec // checked above: a file inside the DAGs folder
	if err != nil {
		return "", false, fmt.Errorf("open dag file %s: %w", file, err)
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, maxSource+1))
	if err != nil {
		return "", false, fmt.Errorf("read dag file %s: %w", file, err)
	}
	if len(b) > maxSource {
		return string(b[:maxSource]), true, nil
	}
	return string(b), false, nil
}
