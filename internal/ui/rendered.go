package ui

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/template"
)

// maxRenderEvents is how many triggering asset events the rendering
// context holds, as a try's run context does (execapi.MaxTriggeringEvents).
const maxRenderEvents = 1000

// renderedData is the rendered-templates page's model.
type renderedData struct {
	TI       core.TaskInstance
	Args     string        // the task's arguments as written, JSON
	Rendered []renderedArg // rendered over the try's context, by name; none when Error says why
	MapArgs  string        // a mapped instance's own arguments, which override the rendered ones
	Error    string
	Base     string // the task instance's page
}

// renderedArg is one argument rendered: a string as it is (a multi-line
// command on its lines), any other value as JSON.
type renderedArg struct {
	Name, Value string
}

// renderedArgs lists args by name, as renderedArg shows them.
func renderedArgs(args map[string]any) []renderedArg {
	out := make([]renderedArg, 0, len(args))
	for _, name := range slices.Sorted(maps.Keys(args)) {
		s, isText := args[name].(string)
		if !isText {
			s = prettyAny(args[name])
		}
		out = append(out, renderedArg{Name: name, Value: s})
	}
	return out
}

// renderedPage shows a task's templated arguments rendered for this try
// as the worker renders them (template.Context of the run, the try and the
// DAG version's params; the run's triggering asset events; xcom_pull
// reading this run's XCom), computed now: an XCom changed since the try
// ran (by a clear) renders differently.
func (u *UI) renderedPage(w http.ResponseWriter, r *http.Request, req *request) {
	ctx := r.Context()
	key, ti, err := u.loadTI(r)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	run, err := u.st.DagRunGet(ctx, key.DagID, key.RunID)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	v, err := u.svc.DagVersion(ctx, ti.DagVersionID)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	task := v.Spec.Task(ti.TaskID)
	if task == nil {
		u.fail(w, r, req, http.StatusNotFound, fmt.Sprintf("Task %q is not in the DAG version this try ran (%d).", ti.TaskID, ti.DagVersionID))
		return
	}
	d := renderedData{TI: *ti, Args: prettyAny(task.Args), MapArgs: prettyJSON(ti.MapArgs), Base: tiURL(key)}
	tctx := template.Context(run, ti, v.Spec.Params)
	if run.RunType == core.RunAssetTriggered {
		p := &store.AssetEventListParams{ConsumedByRunID: run.ID, Page: store.Page{Limit: maxRenderEvents}}
		events, total, err := store.List(ctx, p, u.st.AssetEventList, u.st.AssetEventCount)
		if err != nil {
			u.failErr(w, r, req, err)
			return
		}
		tctx = template.WithEvents(tctx, events, total)
	}
	funcs := template.Funcs{Syntax: v.Spec.TemplateSyntax, XComPull: func(taskID, xkey string) (any, error) {
		x, err := u.st.XComGet(ctx, key.DagID, key.RunID, taskID, core.NoMapIndex, xkey)
		if err != nil {
			return nil, err
		}
		var val any
		return val, json.Unmarshal(x.Value, &val)
	}}
	if args, err := template.RenderArgs(task.Args, tctx, funcs); err != nil {
		d.Error = err.Error()
	} else {
		d.Rendered = renderedArgs(args)
	}
	u.render(w, r, http.StatusOK, "rendered", req, key.TaskID+" rendered", d)
}
