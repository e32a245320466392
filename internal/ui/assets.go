package ui

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// Page sizes of the assets pages.
const (
	assetsPageSize = 50
	eventsPageSize = 25
)

// assetsData is the assets list's model.
type assetsData struct {
	Query, Status string
	Assets        []assetRow
	Pager         pager
}

// assetRow is one asset with the time of its last event.
type assetRow struct {
	core.AssetModel
	LastEvent *time.Time
}

// assetsPage lists assets (?q= in the name, ?status=all|active|inactive),
// each with its last event's time; inactive ones are marked.
func (u *UI) assetsPage(w http.ResponseWriter, r *http.Request, req *request) {
	var d assetsData
	p, err := assetFilter(r.URL.Query(), &d.Query, &d.Status)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	assets, total, offset, err := readPage(r, p, &p.Page, assetsPageSize, u.st.AssetList, u.st.AssetCount)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	for _, a := range assets { // each with its newest event, read for the page
		row := assetRow{AssetModel: a}
		if a.LastEvent != nil {
			row.LastEvent = &a.LastEvent.Timestamp
		}
		d.Assets = append(d.Assets, row)
	}
	d.Pager = newPager(r.URL, "offset", offset, assetsPageSize, len(assets), total)
	u.render(w, r, http.StatusOK, "assets", req, "Assets", d)
}

// assetFilter reads the assets filters shared by the list and the graph:
// ?q= (in the name) and ?status=all|active|inactive, into query and
// status as the form shows them.
func assetFilter(q url.Values, query, status *string) (*store.AssetListParams, error) {
	p := &store.AssetListParams{}
	if *query = q.Get("q"); *query != "" {
		p.NamePattern = "%" + *query + "%" // the REST API's name_pattern: % and _ are wildcards
	}
	var err error
	*status, p.Active, err = statusParam(q, "active", "inactive")
	return p, err
}

// assetData is an asset page's model.
type assetData struct {
	Asset  core.AssetModel
	Extra  string
	Events []eventRow
	Pager  pager
	State  *statePanel
	// Watchers are the asset's watchers with their health.
	Watchers []core.Watcher
	// Materializes is the one DAG producing the asset, which its
	// Materialize button runs ("" when none or several do).
	Materializes string
}

// eventRow is one asset event with its extra indented.
type eventRow struct {
	core.AssetEvent
	Extra string
}

// assetPage shows an asset: what produces and consumes it, its events
// (newest first, paged in the database) and its asset state panel.
func (u *UI) assetPage(w http.ResponseWriter, r *http.Request, req *request) {
	id, err := assetID(r)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	a, err := u.st.AssetGet(r.Context(), id)
	if err != nil {
		u.failErr(w, r, req, fmt.Errorf("asset %d: %w", id, err))
		return
	}
	p := &store.AssetEventListParams{AssetID: id, Page: store.Page{OrderBy: "-id"}}
	events, total, offset, err := readPage(r, p, &p.Page, eventsPageSize, u.st.AssetEventList, u.st.AssetEventCount)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	d := assetData{Asset: *a, Pager: newPager(r.URL, "offset", offset, eventsPageSize, len(events), total)}
	if dags := a.ProducingDags(); len(dags) == 1 {
		d.Materializes = dags[0]
	}
	if len(a.Extra) > 0 {
		d.Extra = prettyAny(a.Extra)
	}
	for _, e := range events {
		d.Events = append(d.Events, eventRow{AssetEvent: e, Extra: prettyJSON(e.Extra)})
	}
	if d.Watchers, err = u.svc.AssetWatchers(r.Context(), id, aliveThreshold); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	base := "/assets/" + strconv.FormatInt(id, 10)
	if d.State, err = u.loadStatePanel(r, core.AssetScope(id), "Asset state", base+"/state", ""); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	u.render(w, r, http.StatusOK, "asset", req, a.Name, d)
}

// materialize runs the one DAG producing the asset (Airflow's
// materialize) and shows the new run.
func (u *UI) materialize(w http.ResponseWriter, r *http.Request, req *request) {
	id, err := assetID(r)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	run, err := u.svc.MaterializeAsset(r.Context(), actor(req), id)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	http.Redirect(w, r, "/dags/"+url.PathEscape(run.DagID)+"/runs/"+url.PathEscape(run.RunID), http.StatusSeeOther)
}

// aliveThreshold is how old a triggerer's heartbeat may be for the
// watchers it runs to show it alive (as the health endpoint's default).
const aliveThreshold = 30 * time.Second

// resetCursor deletes a watcher's cursor (an audited asset-state edit):
// its next poll starts from the beginning.
func (u *UI) resetCursor(w http.ResponseWriter, r *http.Request, req *request) {
	id, err := assetID(r)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	if _, err := u.svc.SetWatcherCursor(r.Context(), u.states, actor(req), id, r.PathValue("watcher"), nil, aliveThreshold); err != nil {
		u.failErr(w, r, req, err)
		return
	}
	back(w, r, "/assets/"+strconv.FormatInt(id, 10))
}

// assetID reads the asset id of the path.
func assetID(r *http.Request) (int64, error) {
	s := r.PathValue("asset_id")
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, fmt.Errorf("%w: %w", &badParam{name: "asset id", value: s, want: "a positive whole number"}, core.ErrInvalid)
	}
	return id, nil
}

// assetScope is the asset state an asset page's state forms edit.
func assetScope(r *http.Request) (core.StateScope, error) {
	id, err := assetID(r)
	return core.AssetScope(id), err
}
