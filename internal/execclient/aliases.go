package execclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/weirflow/weir/internal/core"
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

// Check reports whether the request names an alias and exactly one of the
// asset's name or uri (the server answers 400 otherwise); errors wrap
// core.ErrInvalid.
func (r *OutletEventRequest) Check() error {
	switch {
	case r.Alias == "":
		return fmt.Errorf(`"alias" is required (an alias the task declares as an outlet): %w`, core.ErrInvalid)
	case r.Asset.Alias != "" || (r.Asset.Name == "") == (r.Asset.URI == ""):
		return fmt.Errorf(`"asset" must name a concrete asset by exactly one of name or uri, got %s: %w`,
			r.Asset, core.ErrInvalid)
	}
	return nil
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
	if err := req.Check(); err != nil {
		return err
	}
	path := "/task-instances/" + url.PathEscape(c.Identity.TIID) + "/outlet-events"
	if err := c.doJSON(ctx, http.MethodPost, path, req, nil); err != nil {
		return fmt.Errorf("add asset %s to alias %q: %w", asset, alias, err)
	}
	return nil
}
