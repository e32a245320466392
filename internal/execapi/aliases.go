package execapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/store"
)

// registerAliases adds the route of a try's additions to its alias outlets.
func (s *server) registerAliases(mux *http.ServeMux) {
	mux.HandleFunc("POST /execution/task-instances/{id}/outlet-events", s.execution(s.outletEventAdd))
}

// outletEventAdd serves POST /execution/task-instances/{id}/outlet-events:
// 400 for a bad body, 403 when the try is not running or the alias is not
// one of its task's outlets, 404 unknown_asset for an unknown or inactive
// asset. Nothing is recorded until the try succeeds (docs/assets.md#aliases).
func (s *server) outletEventAdd(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	var req execclient.OutletEventRequest
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
	a, err := s.activeAsset(r.Context(), named)
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
	writeJSON(w, http.StatusOK, execclient.OutletEventResponse{Alias: req.Alias,
		Asset: core.Asset{Name: a.Name, URI: a.URI, Group: a.Group}, Extra: extra})
	return nil
}

// aliasTarget checks the request's shape and returns the asset it names.
func aliasTarget(req *execclient.OutletEventRequest) (core.StateScope, error) {
	if err := req.Check(); err != nil {
		return core.StateScope{}, err
	}
	if req.Asset.Name != "" {
		return core.AssetScopeByName(req.Asset.Name), nil
	}
	return core.AssetScopeByURI(req.Asset.URI), nil
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
