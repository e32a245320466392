package execapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
)

// OutletEventRequest is the body of POST
// /execution/task-instances/{id}/outlet-events: the running try adds the
// concrete Asset (by name or uri) to Alias, one of its task's outlets
// (Airflow's outlet_events[AssetAlias(alias)].add(asset, extra)).
type OutletEventRequest struct {
	Alias string          `json:"alias"`
	Asset core.AssetRef   `json:"asset"`
	Extra json.RawMessage `json:"extra,omitempty"` // a JSON object; absent = {}
}

// OutletEventResponse is the addition as kept: it becomes an event of the
// asset, and associates the alias with it, when the try succeeds.
type OutletEventResponse struct {
	Alias string          `json:"alias"`
	Asset core.Asset      `json:"asset"`
	Extra json.RawMessage `json:"extra"`
}

// registerAliases adds the route of a try's additions to its alias outlets.
func (s *server) registerAliases(mux *http.ServeMux) {
	mux.HandleFunc("POST /execution/task-instances/{id}/outlet-events", s.execution(s.outletEventAdd))
}

// outletEventAdd serves POST /execution/task-instances/{id}/outlet-events:
// 400 for a bad body, 403 when the try is not running or the alias is not
// one of its task's outlets, 404 unknown_asset for an unknown or inactive
// asset. Nothing is recorded until the try succeeds (docs/assets.md#aliases).
func (s *server) outletEventAdd(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	if _, err := ownTI(r, c); err != nil {
		return err
	}
	var req OutletEventRequest
	if err := readJSON(w, r, smallBody, &req); err != nil {
		return err
	}
	named, err := aliasTarget(&req)
	if err != nil {
		return err
	}
	ti, err := s.runningTI(r, c)
	if err != nil {
		return err
	}
	task, err := s.taskSpec(r.Context(), ti)
	if err != nil {
		return err
	}
	if err := checkAliasOutlet(task, req.Alias); err != nil {
		return err
	}
	a, err := s.activeAsset(r, named)
	if err != nil {
		return err
	}
	err = s.st.AssetAliasEventAdd(r.Context(), &store.AssetAliasEventParams{TaskInstanceID: ti.ID, Alias: req.Alias,
		AssetID: a.ID, Extra: req.Extra, Now: s.clock.Now()})
	if errors.Is(err, core.ErrConflict) {
		return forbidden(notRunning(ti))
	}
	if err != nil {
		return err
	}
	extra := req.Extra
	if len(extra) == 0 {
		extra = json.RawMessage("{}")
	}
	writeJSON(w, http.StatusOK, OutletEventResponse{Alias: req.Alias,
		Asset: core.Asset{Name: a.Name, URI: a.URI, Group: a.Group}, Extra: extra})
	return nil
}

// aliasTarget checks the request's shape and returns the asset it names.
func aliasTarget(req *OutletEventRequest) (statestore.AssetScope, error) {
	switch {
	case req.Alias == "":
		return statestore.AssetScope{}, fmt.Errorf(`"alias" is required (an alias the task declares as an outlet): %w`, core.ErrInvalid)
	case req.Asset.Alias != "" || (req.Asset.Name == "") == (req.Asset.URI == ""):
		return statestore.AssetScope{}, fmt.Errorf(`"asset" must name a concrete asset by exactly one of name or uri, got %s: %w`,
			req.Asset, core.ErrInvalid)
	}
	return statestore.AssetScope{Name: req.Asset.Name, URI: req.Asset.URI}, nil
}

// checkAliasOutlet refuses (403) an alias the task does not declare as an
// outlet, naming the aliases it does declare.
func checkAliasOutlet(task *core.Task, alias string) error {
	var declared []string
	for _, o := range task.Outlets {
		if o.Alias == alias {
			return nil
		}
		if o.Alias != "" {
			declared = append(declared, strconv.Quote(o.Alias))
		}
	}
	list := "none"
	if len(declared) > 0 {
		list = strings.Join(declared, ", ")
	}
	return fmt.Errorf("task %s may not add assets to alias %q: it is not one of the task's outlets (alias outlets: %s): %w",
		task.TaskID, alias, list, core.ErrForbidden)
}

// AddToAlias adds the concrete asset (by name or uri) to alias, one of the
// outlets of the client's try's task, with extra (a JSON object, or nil):
// when the try succeeds the asset gets an event and the alias resolves to
// it. An error matches core.ErrForbidden when the alias is not an outlet of
// the task, core.ErrNotFound when the asset is unknown or inactive.
func (c *Client) AddToAlias(ctx context.Context, alias string, asset core.AssetRef, extra json.RawMessage) error {
	if c.Identity.TIID == "" {
		return errors.New("add to alias: the client has no task instance id (WEIR_TI_ID)")
	}
	req := OutletEventRequest{Alias: alias, Asset: asset, Extra: extra}
	if _, err := aliasTarget(&req); err != nil {
		return err
	}
	path := "/task-instances/" + url.PathEscape(c.Identity.TIID) + "/outlet-events"
	if err := c.doJSON(ctx, http.MethodPost, path, req, nil); err != nil {
		return fmt.Errorf("add asset %s to alias %q: %w", asset, alias, err)
	}
	return nil
}
