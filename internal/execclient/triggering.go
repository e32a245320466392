package execclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/weirflow/weir/internal/core"
)

// TriggeringEventsPage is a page of the asset events that created the
// try's run, oldest first, and how many the run consumed in all.
type TriggeringEventsPage struct {
	Events []core.AssetEvent `json:"events"`
	Total  int               `json:"total"`
}

// TriggeringEvents reads the page of the client's try's triggering asset
// events after event id after (0: from the first), at most limit of them
// (0: the server's most, 1,000).
func (c *Client) TriggeringEvents(ctx context.Context, after int64, limit int) (*TriggeringEventsPage, error) {
	if c.Identity.TIID == "" {
		return nil, errors.New("read the run's triggering asset events: the client has no task instance id (WEIR_TI_ID)")
	}
	q := url.Values{"after": {strconv.FormatInt(after, 10)}, "limit": {strconv.Itoa(limit)}}
	var p TriggeringEventsPage
	if err := c.doJSON(ctx, http.MethodGet, tiPath(c.Identity.TIID, "triggering-asset-events")+"?"+q.Encode(), nil, &p); err != nil {
		return nil, fmt.Errorf("read the run's triggering asset events after event %d: %w", after, err)
	}
	return &p, nil
}
