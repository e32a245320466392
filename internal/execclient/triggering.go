package execclient

import (
	"context"
	"fmt"
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
	var p TriggeringEventsPage
	q := url.Values{"after": {strconv.FormatInt(after, 10)}, "limit": {strconv.Itoa(limit)}}
	return &p, c.getOfTry(ctx, "triggering-asset-events", q, &p, fmt.Sprintf("read the run's triggering asset events after event %d", after))
}
